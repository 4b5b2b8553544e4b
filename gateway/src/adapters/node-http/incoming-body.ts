/**
 * The request body on node:http, for the infer fast path (native-infer.ts).
 *
 * `readIncomingBody` reads an uncompressed body within a byte limit, with the same checks and messages
 * as the Web reader of the core (core/http/read-body.ts): a declared Content-Length over the limit is
 * refused before reading, a body that grows past it is refused as soon as it does. Compressed bodies
 * never come here: the fast path leaves them to the Hono app, whose reader decompresses.
 *
 * `discardUnreadBody` is what @hono/node-server does with a body its handler did not read (a 401
 * before the body, a body over the limit): read and drop up to 64 MiB for at most 500 ms so the
 * connection can be kept alive, else close it.
 */
import type { IncomingMessage } from 'node:http';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { BodyOverLimitError } from '../../core/http/index.js';
import { collectIncomingBody } from '../../../../shared/src/http/index.js';

const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
const DISCARD_MAX_MS = 500;

export function readIncomingBody(incoming: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  const declared = incoming.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    return Promise.reject(new BodyOverLimitError(maxBytes, declared));
  }
  const failed = (error: Error): TesseraError => TesseraError.invalidArg(`could not read the request body: ${error.message}`);
  return collectIncomingBody(incoming, maxBytes, {
    // Reading stops there: the answer says why, and discardUnreadBody deals with the rest afterwards.
    overLimit: () => new BodyOverLimitError(maxBytes),
    failed,
    closedEarly: () => failed(new Error('the connection closed before the whole body arrived')),
  });
}

/** After the answer was sent: drops whatever of the body was not read, or closes the connection. */
export function discardUnreadBody(incoming: IncomingMessage): void {
  if (incoming.readableEnded || incoming.destroyed) return;
  let bytes = 0;
  const cleanup = (): void => {
    clearTimeout(timer);
    incoming.off('data', onData);
    incoming.off('end', cleanup);
    incoming.off('error', cleanup);
  };
  const close = (): void => {
    cleanup();
    incoming.socket?.destroySoon();
  };
  const timer = setTimeout(close, DISCARD_MAX_MS);
  timer.unref();
  const onData = (chunk: Buffer): void => {
    bytes += chunk.byteLength;
    if (bytes > DISCARD_MAX_BYTES) close();
  };
  incoming.on('data', onData);
  incoming.on('end', cleanup);
  incoming.on('error', cleanup);
  incoming.resume();
}
