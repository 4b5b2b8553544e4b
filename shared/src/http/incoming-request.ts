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

/**
 * The body as it arrives, refused as soon as it grows past `maxBytes`. Nothing is decompressed.
 *
 * Its listeners stay on the request once it settles (a `settled` flag silences them) rather than being
 * taken off: the request is finished either way, and four removals cost more than the rest of the read
 * (each `off` deletes a key of the emitter's listener table, which turns it into a slow dictionary).
 */
export function collectIncomingBody(incoming: IncomingMessage, maxBytes: number, errors: IncomingBodyErrors): Promise<Uint8Array> {
  if (incoming.readableEnded) return Promise.resolve(new Uint8Array(0));
  return new Promise((resolve, reject) => {
    let first: Buffer | undefined;
    let more: Buffer[] | undefined;
    let total = 0;
    let settled = false;
    const onData = (chunk: Buffer): void => {
      if (settled) return;
      total += chunk.byteLength;
      if (total > maxBytes) {
        settled = true;
        first = undefined;
        more = undefined;
        incoming.off('data', onData);
        incoming.pause();
        reject(errors.overLimit());
        return;
      }
      if (first === undefined) first = chunk;
      else (more ??= [first]).push(chunk);
    };
    incoming.on('data', onData);
    incoming.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(more !== undefined ? joinChunks(more, total) : first === undefined ? new Uint8Array(0) : asUint8Array(first));
    });
    incoming.on('error', (error: Error) => {
      if (settled) return;
      settled = true;
      reject(errors.failed(error));
    });
    // 'close' without 'end' and without 'error': the client went away mid-body.
    incoming.on('close', () => {
      if (settled || incoming.complete) return;
      settled = true;
      reject(errors.closedEarly());
    });
  });
}

function asUint8Array(chunk: Uint8Array): Uint8Array {
  return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * One chunk as a plain Uint8Array view of it (no copy), several copied into one fresh array, as the
 * Web readers do: a Buffer's `slice` would not copy, and code downstream takes Uint8Array semantics.
 */
export function joinChunks(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return asUint8Array(chunks[0]!);
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
