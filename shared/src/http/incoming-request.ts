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
 * The listeners are shared functions that find the read's state on the request, not four closures per request.
 */
export function collectIncomingBody(incoming: IncomingMessage, maxBytes: number, errors: IncomingBodyErrors): Promise<Uint8Array> {
  // A second read of the same request gets the first one's answer: the shared listeners must not run twice per chunk.
  const reading = (incoming as Collecting)[COLLECTOR];
  if (reading?.body !== undefined) return reading.body;
  if (incoming.readableEnded) return Promise.resolve(new Uint8Array(0));
  const body = new Promise<Uint8Array>((resolve, reject) => {
    (incoming as Collecting)[COLLECTOR] = new BodyCollection(maxBytes, errors, resolve, reject);
    incoming.on('data', onBodyData);
    incoming.on('end', onBodyEnd);
    incoming.on('error', onBodyError);
    // 'close' without 'end' and without 'error': the client went away mid-body.
    incoming.on('close', onBodyClose);
  });
  (incoming as Collecting)[COLLECTOR]!.body = body;
  return body;
}

/** One body read's state, kept on its request under COLLECTOR. */
class BodyCollection {
  first: Buffer | undefined = undefined;
  more: Buffer[] | undefined = undefined;
  total = 0;
  settled = false;
  /** The read's promise, for a second read of the same request. */
  body: Promise<Uint8Array> | undefined = undefined;

  constructor(
    readonly maxBytes: number,
    readonly errors: IncomingBodyErrors,
    readonly resolve: (body: Uint8Array) => void,
    readonly reject: (error: Error) => void,
  ) {}
}

const COLLECTOR = Symbol('tessera.bodyCollection');
type Collecting = IncomingMessage & { [COLLECTOR]?: BodyCollection };

function onBodyData(this: Collecting, chunk: Buffer): void {
  const read = this[COLLECTOR];
  if (read === undefined || read.settled) return;
  read.total += chunk.byteLength;
  if (read.total > read.maxBytes) {
    read.settled = true;
    read.first = undefined;
    read.more = undefined;
    this.off('data', onBodyData);
    this.pause();
    read.reject(read.errors.overLimit());
    return;
  }
  if (read.first === undefined) read.first = chunk;
  else (read.more ??= [read.first]).push(chunk);
}

function onBodyEnd(this: Collecting): void {
  const read = this[COLLECTOR];
  if (read === undefined || read.settled) return;
  read.settled = true;
  const { first, more } = read;
  read.first = undefined;
  read.more = undefined;
  read.resolve(more !== undefined ? joinChunks(more, read.total) : first === undefined ? new Uint8Array(0) : asUint8Array(first));
}

function onBodyError(this: Collecting, error: Error): void {
  const read = this[COLLECTOR];
  if (read === undefined || read.settled) return;
  read.settled = true;
  read.reject(read.errors.failed(error));
}

function onBodyClose(this: Collecting): void {
  const read = this[COLLECTOR];
  if (read === undefined || read.settled || this.complete) return;
  read.settled = true;
  read.reject(read.errors.closedEarly());
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
