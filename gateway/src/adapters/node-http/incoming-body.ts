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

const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
const DISCARD_MAX_MS = 500;

export function readIncomingBody(incoming: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  const declared = incoming.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) {
    return Promise.reject(TesseraError.invalidArg(`request body of ${declared} bytes exceeds the gateway's limit of ${maxBytes} bytes`));
  }
  if (incoming.readableEnded) return Promise.resolve(new Uint8Array(0));
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const cleanup = (): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total > maxBytes) {
        cleanup();
        // Stop reading: the answer says why, and discardUnreadBody deals with the rest afterwards.
        incoming.pause();
        reject(TesseraError.invalidArg(`request body exceeds the gateway's limit of ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(joinChunks(chunks, total));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(TesseraError.invalidArg(`could not read the request body: ${error.message}`));
    };
    // 'close' without 'end' (and without 'error'): the client went away mid-body.
    const onClose = (): void => onError(new Error('the connection closed before the whole body arrived'));
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

/**
 * One chunk as a plain Uint8Array view of it (no copy), several copied into one fresh array, as the
 * Web reader does: a Buffer's `slice` would not copy, and code downstream takes Uint8Array semantics.
 */
function joinChunks(chunks: readonly Buffer[], total: number): Uint8Array {
  if (chunks.length === 1) {
    const only = chunks[0]!;
    return new Uint8Array(only.buffer, only.byteOffset, only.byteLength);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
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
