/**
 * Drives a relayed stream (core/llm/sse-relay.ts) from the node's answer straight into the client's
 * ServerResponse: each chunk the upstream socket delivers is fed to the relay and the whole events it
 * gives back are written at once, in one chunked write, with no Web stream, promise or copy between.
 *
 * Back-pressure: a client that reads slower than the node writes makes `write` answer false; the
 * node's answer is then paused until the client drains, so what the gateway holds per stream stays
 * within the sockets' buffers (TCP pushes back on the node). The client going away (`close` before
 * the end) cancels the relay, which aborts the node's request.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { SseRelay } from '../../core/llm/sse-relay.js';
import { directBodyOf } from './h2-direct-body.js';
import { frameChunk, lastChunk } from './http-chunk.js';

/** `onStarted`: called once, after the first events are written (or at the end, when none were). */
export function relayToResponse(
  source: AsyncIterable<Uint8Array>,
  relay: SseRelay,
  outgoing: ServerResponse,
  headers: Record<string, string>,
  onStarted?: () => void,
): void {
  const input = source instanceof Readable ? source : Readable.from(source, { objectMode: false });
  // An HTTP/2 answer is read below its Readable (h2-direct-body.ts): its chunks come to onData directly,
  // and onData's false answer stops its reading instead of pause().
  const direct = directBodyOf(source);
  // Not flushed on its own: the node answers with its first event, so the status line goes with it, in one write.
  outgoing.writeHead(200, headers);
  let done = false;
  // Set once node:http's chunked framing is off: each event is framed by frameChunk and written here.
  let socket: Socket | undefined;
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
    outgoing.off('drain', onDrain);
    outgoing.off('close', onClientClose);
    socket?.off('drain', onDrain);
    if (!input.readableEnded) input.destroy();
    if (last !== false) {
      if (socket !== undefined) outgoing.end(last !== undefined && last.length > 0 ? frameChunk(last, true) : lastChunk());
      else if (last !== undefined) outgoing.end(last);
      else outgoing.end();
    }
    start();
  };
  /** Relays one chunk; false: the client is not keeping up (the input is paused until it drains). */
  const onData = (chunk: Uint8Array): boolean => {
    if (done) return false;
    const out = relay.push(chunk);
    if (relay.over) {
      finish(out);
      return false;
    }
    if (out === undefined) return true;
    const flowing = send(out);
    // Counted once written (sse-relay.ts says why), and the request recorded after its first events.
    relay.meterSent();
    start();
    if (!flowing && direct === undefined) input.pause();
    return flowing;
  };
  /** Writes whole events; false: the client is not keeping up. */
  const send = (out: Uint8Array): boolean => {
    // A socket gone is reported by the response's 'close' (onClientClose).
    if (socket !== undefined) return socket.destroyed || socket.write(frameChunk(out));
    const flowing = outgoing.write(out);
    if (outgoing.chunkedEncoding && outgoing.headersSent && outgoing.socket !== null) {
      outgoing.chunkedEncoding = false;
      socket = outgoing.socket;
      socket.on('drain', onDrain);
      // node:http corks the socket on a response's write until the next tick: the status line and the
      // first events leave now, not after the work that follows them (their count, the access line).
      if (socket.writableCorked > 0) socket.uncork();
    }
    return flowing;
  };
  const onEnd = (): void => finish(relay.end());
  const onDrain = (): void => {
    if (direct !== undefined) direct.resume();
    else input.resume();
  };
  const onClientClose = (): void => {
    if (done) return;
    relay.cancel(new Error('the client closed the connection'));
    finish(false);
  };
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
  outgoing.on('drain', onDrain);
  outgoing.once('close', onClientClose);
}
