/**
 * The node's gRPC port on the raw HTTP/2 front (shared/src/http/raw-http2) instead of grpc-js's
 * node:http2 server (`--grpc-raw-h2`). Plain unary calls are served in place: ModelInfer by the same fast
 * path as with grpc-js (h2-model-infer.ts: same decoding, `core.infer`, answer, load trailers, statuses),
 * the other unary RPCs and health Check by in-place-unary.ts with grpc-js's handlers' own logic. Every
 * other stream (ModelStreamInfer, compressed or restricted calls, unknown methods, anything `take`
 * declines) is relayed unchanged to grpc-js listening on a loopback port, over one node:http2 client
 * session per front connection, so grpc-js answers everything it answered before.
 *
 * Why: under the mlp_large [64] wave, node:http2's own per-stream work is ~86 µs of the main thread per
 * call that a plain net.Server reading HTTP/2 itself does not spend (docs/benchmarks.md, issue 18,
 * 2026-11-27d).
 */
import http2, { type ClientHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { createRawH2Front, relayStream, type RawH2Front, type RawH2Limits, type StreamHandler } from '../../../../shared/src/http/raw-http2/index.js';
import type { StreamTaker, UnaryStream } from '../../../../shared/src/grpc/index.js';
import { DEFAULT_FLOW_CONTROL_WINDOW } from './flow-control.js';

export interface RawH2GrpcFront {
  listen(port: number, host: string): Promise<{ port: number }>;
  /** GOAWAY to every connection; those still open after `graceMs` are ended. */
  close(graceMs: number): Promise<void>;
  /** Streams passed on to grpc-js so far (what `take` declined): should stay rare. */
  relayedStreams(): number;
}

/** `take` serves what it can in place; the rest goes to grpc-js at 127.0.0.1:`internalPort`. */
export function rawH2GrpcFront(take: StreamTaker<UnaryStream>, internalPort: number, limits: Partial<RawH2Limits> = {}): RawH2GrpcFront {
  let relayed = 0;
  const perConnection = (socket: Socket): StreamHandler => {
    let session: ClientHttp2Session | undefined;
    const relaySession = (): ClientHttp2Session => {
      if (session === undefined || session.closed || session.destroyed) {
        session = http2.connect(`http://127.0.0.1:${internalPort}`, { settings: { initialWindowSize: DEFAULT_FLOW_CONTROL_WINDOW } });
        session.on('error', () => {});
        // The connection window starts at 64 KiB whatever SETTINGS say (as flow-control.ts widens grpc-js's).
        session.once('connect', (connected: ClientHttp2Session) => connected.setLocalWindowSize(DEFAULT_FLOW_CONTROL_WINDOW));
      }
      return session;
    };
    socket.on('close', () => session?.destroy());
    return (stream, headers) => {
      if (take(stream, headers)) return;
      relayed++;
      relayStream(stream, headers, relaySession());
    };
  };
  const front: RawH2Front = createRawH2Front(perConnection, { windowBytes: DEFAULT_FLOW_CONTROL_WINDOW, ...limits });
  return {
    relayedStreams: () => relayed,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        front.server.once('error', reject);
        front.server.listen(port, host, () => {
          front.server.off('error', reject);
          const address = front.server.address();
          resolve({ port: typeof address === 'object' && address !== null ? address.port : port });
        });
      });
    },
    close(graceMs) {
      front.shutdown();
      return new Promise((resolve) => {
        const started = Date.now();
        const poll = setInterval(() => {
          if (front.connectionCount() > 0 && Date.now() - started < graceMs) return;
          clearInterval(poll);
          front.destroyAll();
          resolve();
        }, 20);
      });
    },
  };
}
