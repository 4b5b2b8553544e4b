/**
 * The loop that drives a relayed stream (core/llm/sse-relay.ts) from the node's answer into a client's
 * answer, shared by node:http (relay-to-response.ts) and the raw HTTP/1.1 front door (llm-raw-relay.ts):
 * each read of the node's answer is fed to the relay and the whole events it gives back are written at
 * once, with no Web stream, promise or copy between. The two differ only in how bytes reach the client,
 * which is the sink's business.
 *
 * Back-pressure: a write that answers false pauses the node's answer (an HTTP/2 or raw answer is read below
 * its Readable, h2-direct-body.ts: onData's false pauses its flow) until the sink calls `resume` (the
 * client drained), so what the gateway holds per stream stays within the sockets' buffers.
 */
import { Readable } from 'node:stream';
import type { SseRelay } from '../../core/llm/sse-relay.js';
import { directBodyOf } from './h2-direct-body.js';

/** Where a relay's bytes go: made by the driver's caller with the driver's `resume` (its drain hook) and `clientGone`. */
export interface RelaySink {
  /** Writes whole events; false: the client is not keeping up. */
  write(out: Uint8Array): boolean;
  /** Ends the client's answer, `last` the final bytes (undefined: none). */
  end(last: Uint8Array | undefined): void;
  /** The relay is over: the sink drops its listeners (called before `end`, once). */
  release(): void;
}

/**
 * Starts relaying `source` to the sink that `makeSink` builds. `onStarted`: called once, after the first
 * events are written (or at the end, when none were). Returns the hook for the client going away, which
 * cancels the relay (and so the node's request).
 */
export function driveRelay(
  source: AsyncIterable<Uint8Array>,
  relay: SseRelay,
  makeSink: (resume: () => void, clientGone: () => void) => RelaySink,
  onStarted?: () => void,
): () => void {
  const input = source instanceof Readable ? source : Readable.from(source, { objectMode: false });
  const direct = directBodyOf(source);
  let done = false;
  let started = onStarted;
  const start = (): void => {
    const call = started;
    started = undefined;
    call?.();
  };
  const clientGone = (): void => {
    if (done) return;
    relay.cancel(new Error('the client closed the connection'));
    finish(false);
  };
  const sink = makeSink(() => {
    if (direct !== undefined) direct.resume();
    else input.resume();
  }, clientGone);

  /** `last`: the final bytes; false: the client is gone, nothing more to write. */
  const finish = (last: Uint8Array | undefined | false): void => {
    if (done) return;
    done = true;
    if (direct === undefined) input.off('data', onData);
    input.off('end', onEnd);
    sink.release();
    if (!input.readableEnded) input.destroy();
    if (last !== false) sink.end(last);
    start();
  };
  const onData = (chunk: Uint8Array): boolean => {
    if (done) return false;
    const out = relay.push(chunk);
    if (relay.over) {
      finish(out);
      return false;
    }
    if (out === undefined || out.byteLength === 0) return true;
    const flowing = sink.write(out);
    // Counted once written (sse-relay.ts says why), and the request recorded after its first events.
    relay.meterSent();
    start();
    if (!flowing && direct === undefined) input.pause();
    return flowing;
  };
  const onEnd = (): void => finish(relay.end());
  // Kept for good: the node's answer may still fail after we stopped listening (aborted on purpose).
  input.on('error', (error) => {
    if (!done) finish(relay.fail(undefined, error));
  });
  // Closed without 'end' or 'error' (an HTTP/2 stream whose session was torn down): the answer is cut.
  input.once('close', () => {
    if (!done && !input.readableEnded) finish(relay.fail(undefined, new Error('the node\'s answer closed before its end')));
  });
  input.once('end', onEnd);
  if (direct !== undefined) direct.start(onData);
  else input.on('data', onData);
  return clientGone;
}
