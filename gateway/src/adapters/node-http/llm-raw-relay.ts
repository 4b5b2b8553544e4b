/**
 * Drives a relayed stream (core/llm/sse-relay.ts) from the node's answer into a raw front-door stream
 * (shared/src/http/raw-http1/stream-writer.ts): relay-to-response.ts's loop without node:http's ServerResponse.
 * Each read of the node's answer gives whole events, written as one chunk in one socket write.
 *
 * Back-pressure: a write that answers false pauses the node's answer until the client's socket drains, so what
 * the gateway holds per stream stays within the sockets' buffers. The client going away (`clientGone`, from the
 * connection's watch) cancels the relay, which aborts the node's request.
 */
import { Readable } from 'node:stream';
import type { RawStreamWriter } from '../../../../shared/src/http/raw-http1/index.js';
import type { SseRelay } from '../../core/llm/sse-relay.js';
import { directBodyOf } from './h2-direct-body.js';

/** `onStarted`: called once, after the first events are written (or at the end, when none were). Returns the client-gone hook. */
export function relayToRawStream(source: AsyncIterable<Uint8Array>, relay: SseRelay, writer: RawStreamWriter, onStarted?: () => void): () => void {
  const input = source instanceof Readable ? source : Readable.from(source, { objectMode: false });
  // An HTTP/2 answer is read below its Readable (h2-direct-body.ts): onData's false stops its reading.
  const direct = directBodyOf(source);
  const socket = writer.socket;
  let done = false;
  let started = onStarted;
  const start = (): void => {
    const call = started;
    started = undefined;
    call?.();
  };

  /** `last`: the final bytes; false: the client is gone, nothing more to write. */
  const finish = (last: Uint8Array | undefined | false): void => {
    if (done) return;
    done = true;
    if (direct === undefined) input.off('data', onData);
    input.off('end', onEnd);
    socket.off('drain', onDrain);
    if (!input.readableEnded) input.destroy();
    if (last !== false) writer.end(last);
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
    const flowing = writer.write(out);
    // Counted once written (sse-relay.ts says why), and the request recorded after its first events.
    relay.meterSent();
    start();
    if (!flowing && direct === undefined) input.pause();
    return flowing;
  };
  const onEnd = (): void => finish(relay.end());
  const onDrain = (): void => {
    if (direct !== undefined) direct.resume();
    else input.resume();
  };
  input.on('error', (error) => {
    if (!done) finish(relay.fail(undefined, error));
  });
  input.once('close', () => {
    if (!done && !input.readableEnded) finish(relay.fail(undefined, new Error('the node\'s answer closed before its end')));
  });
  input.once('end', onEnd);
  if (direct !== undefined) direct.start(onData);
  else input.on('data', onData);
  socket.on('drain', onDrain);
  return () => {
    if (done) return;
    relay.cancel(new Error('the client closed the connection'));
    finish(false);
  };
}
