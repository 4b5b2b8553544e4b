/**
 * A relayed stream (core/llm/sse-relay.ts) written into the client's ServerResponse by the shared driver
 * (relay-driver.ts): each chunk the upstream socket delivers gives whole events, written in one chunked
 * write. Once node:http has sent the head, its chunked framing is turned off and each event is framed
 * here (frameChunk) and written to the socket straight. The client going away (the response's `close`
 * before the end) cancels the relay, which aborts the node's request.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { SseRelay } from '../../core/llm/sse-relay.js';
import { frameChunk, lastChunk } from './http-chunk.js';
import { driveRelay, type RelaySink } from './relay-driver.js';

/** `onStarted`: called once, after the first events are written (or at the end, when none were). */
export function relayToResponse(
  source: AsyncIterable<Uint8Array>,
  relay: SseRelay,
  outgoing: ServerResponse,
  headers: Record<string, string>,
  onStarted?: () => void,
): void {
  // Not flushed on its own: the node answers with its first event, so the status line goes with it, in one write.
  outgoing.writeHead(200, headers);
  const sink = (resume: () => void, clientGone: () => void): RelaySink => {
    // Set once node:http's chunked framing is off: each event is framed by frameChunk and written here.
    let socket: Socket | undefined;
    outgoing.on('drain', resume);
    outgoing.once('close', clientGone);
    return {
      write(out) {
        // A socket gone is reported by the response's 'close' (onClientClose).
        if (socket !== undefined) return socket.destroyed || socket.write(frameChunk(out));
        const flowing = outgoing.write(out);
        if (outgoing.chunkedEncoding && outgoing.headersSent && outgoing.socket !== null) {
          outgoing.chunkedEncoding = false;
          socket = outgoing.socket;
          socket.on('drain', resume);
          // node:http corks the socket on a response's write until the next tick: the status line and the
          // first events leave now, not after the work that follows them (their count, the access line).
          if (socket.writableCorked > 0) socket.uncork();
        }
        return flowing;
      },
      end(last) {
        if (socket !== undefined) outgoing.end(last !== undefined && last.length > 0 ? frameChunk(last, true) : lastChunk());
        else if (last !== undefined) outgoing.end(last);
        else outgoing.end();
      },
      release() {
        outgoing.off('drain', resume);
        outgoing.off('close', clientGone);
        socket?.off('drain', resume);
      },
    };
  };
  driveRelay(source, relay, sink, onStarted);
}
