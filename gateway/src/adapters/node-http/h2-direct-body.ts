/**
 * A node's HTTP/2 answer read below its Readable: the chunks the session's read callback pushes go
 * straight to one consumer, not through the stream's buffer, 'data' event and read-ahead.
 *
 * Why: per streamed token, a flowing Readable spent a `push` (readableAddChunk, addChunk), a 'data'
 * emit, and a next-tick `maybeReadMore` that calls `read(0)`, `_read` and the handle's `readStart` again
 * (node 20's stream_base_commons and internal/http2/core): several µs of the gateway's CPU per token at
 * 64 streams (docs/benchmarks.md, issue 20). Here each chunk is one call.
 *
 * Contract with node:http2 (the stream's `push` is what its handle's read callback calls, and a false
 * answer makes it stop reading the handle, which holds the node back by HTTP/2 flow control):
 * - `start(onChunk)`: what the Readable holds already is handed over first, then every chunk is;
 *   `onChunk` answers false to stop reading (back-pressure) until `resume` (a refusal of the held
 *   bytes stops nothing: the next chunk is refused too, and that one stops the handle).
 * - The end (`push(null)`) and errors still go through the Readable: 'end', 'error' and 'close' are
 *   emitted as before, so the stream's own clean-up (its handle, the session's stream count) is unchanged.
 */
import type { ClientHttp2Stream } from 'node:http2';

export interface DirectBody {
  start(onChunk: (chunk: Buffer) => boolean): void;
  /** Reads the handle again after `onChunk` answered false. */
  resume(): void;
}

const bodies = new WeakMap<object, DirectBody>();

/** The direct reader of an upstream answer, when it has one (an HTTP/2 stream of llm-h2-upstream.ts, a raw answer of raw-answer-body.ts). */
export function directBodyOf(source: unknown): DirectBody | undefined {
  return typeof source === 'object' && source !== null ? bodies.get(source) : undefined;
}

/** Makes `body` the direct reader of `source` (an answer that reads its own socket: raw-answer-body.ts). */
export function registerDirectBody(source: object, body: DirectBody): void {
  bodies.set(source, body);
}

/**
 * Takes over the stream's `push`: data goes to the consumer once one is set, the end to `onEnd` first
 * (which may drop it, answering false: a cut answer) and then to the Readable.
 */
export function makeDirectBody(stream: ClientHttp2Stream, onEnd: () => boolean): void {
  const push = stream.push.bind(stream);
  let consumer: ((chunk: Buffer) => boolean) | undefined;
  stream.push = (chunk: unknown, encoding?: BufferEncoding): boolean => {
    if (chunk === null) return onEnd() ? push(null) : false;
    if (consumer !== undefined) return consumer(chunk as Buffer);
    return push(chunk, encoding);
  };
  bodies.set(stream, {
    start(onChunk) {
      consumer = onChunk;
      // What came before the relay started (with the headers) is handed over first, in one piece:
      // read() answers the whole buffer, and starts the handle reading (the stream's _read) after it.
      const held = stream.read() as Buffer | null;
      if (held !== null) onChunk(held);
    },
    resume() {
      // The stream's own _read: it restarts the handle's reading (or ends a destroyed stream).
      if (!stream.destroyed) (stream as unknown as { _read(size: number): void })._read(0);
    },
  });
}
