/**
 * Reading a node:http IncomingMessage without the Web Request layer, for the infer fast paths of the
 * node agent (gpu-node/src/server/http/native-infer.ts) and the gateway
 * (gateway/src/adapters/node-http/native-infer.ts): a header as Web Headers would give it, and the
 * body collected from plain 'data' events within a byte limit.
 */
import type { IncomingMessage } from 'node:http';

/** A header by lower-case name; repeated ones joined with ", ", as Web Headers join them. */
export function incomingHeader(incoming: IncomingMessage, name: string): string | null {
  const value = incoming.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The errors a body read ends with; each server words them its own way. */
export interface IncomingBodyErrors {
  /** The body grew past the limit (the request is paused, not drained: the caller deals with the rest). */
  overLimit(): Error;
  /** The stream failed (a broken chunked encoding, a reset). */
  failed(error: Error): Error;
  /** The connection closed before the whole body arrived. */
  closedEarly(): Error;
}

/** The body as it arrives, refused as soon as it grows past `maxBytes`. Nothing is decompressed. */
export function collectIncomingBody(incoming: IncomingMessage, maxBytes: number, errors: IncomingBodyErrors): Promise<Uint8Array> {
  if (incoming.readableEnded) return Promise.resolve(new Uint8Array(0));
  return new Promise((resolve, reject) => {
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
        incoming.pause();
        reject(errors.overLimit());
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
      reject(errors.failed(error));
    };
    // 'close' without 'end' and without 'error': the client went away mid-body.
    const onClose = (): void => {
      if (incoming.complete) return;
      cleanup();
      reject(errors.closedEarly());
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}

/**
 * One chunk as a plain Uint8Array view of it (no copy), several copied into one fresh array, as the
 * Web readers do: a Buffer's `slice` would not copy, and code downstream takes Uint8Array semantics.
 */
export function joinChunks(chunks: readonly Uint8Array[], total: number): Uint8Array {
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
