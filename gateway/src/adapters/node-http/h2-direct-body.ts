/**
 * An upstream answer read below its Readable: each slice the answer's reader gets goes straight to one
 * consumer (the relay driver, relay-driver.ts), not through the Readable's buffer, 'data' event and read-ahead.
 *
 * Why: per streamed token, a flowing Readable spent a `push` (readableAddChunk, addChunk), a 'data' emit, and a
 * next-tick `maybeReadMore` with `read(0)` and `_read` again: several µs of the gateway's CPU per token at 64
 * streams (docs/benchmarks.md, issue 20). Here each slice is one call. The answers that offer it are the ones the
 * gateway reads itself (raw-answer-body.ts: raw HTTP/1.1 and raw HTTP/2).
 *
 * Contract: `start(onChunk)` hands over what came before it first, then every slice; `onChunk` answers false to
 * stop the flow (back-pressure) until `resume`. The end and errors still go through the Readable ('end', 'error',
 * 'close' as before).
 */
export interface DirectBody {
  start(onChunk: (chunk: Buffer) => boolean): void;
  /** Restarts the flow after `onChunk` answered false. */
  resume(): void;
}

const bodies = new WeakMap<object, DirectBody>();

/** The direct reader of an upstream answer, when it has one (raw-answer-body.ts). */
export function directBodyOf(source: unknown): DirectBody | undefined {
  return typeof source === 'object' && source !== null ? bodies.get(source) : undefined;
}

/** Makes `body` the direct reader of `source` (an answer the gateway reads itself: raw-answer-body.ts). */
export function registerDirectBody(source: object, body: DirectBody): void {
  bodies.set(source, body);
}
