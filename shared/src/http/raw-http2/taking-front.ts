/**
 * A gRPC port on the raw HTTP/2 front with grpc-js behind it on loopback: each new stream goes to `take`
 * first (a fast path serving plain unary calls in place); every stream it declines is relayed unchanged
 * (relay.ts) to the grpc-js server at 127.0.0.1:`internalPort`, over one node:http2 client session per
 * front connection, so grpc-js answers everything it answered when it owned the port.
 *
 * Used by the gateway's gRPC front door (`grpcRawH2`) and the node's gRPC port (`--grpc-raw-h2`, raw-h2-front.ts).
 */
import http2, { type ClientHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { StreamHandler, RawH2Limits } from './connection.js';
import { createRawH2Front } from './front.js';
import type { RawH2Stream } from './raw-stream.js';
import { relayStream } from './relay.js';
import type { RequestHeaders } from './request-headers.js';

/** Serves the stream and answers true, or answers false having read and written nothing. */
export type RawStreamTaker = (stream: RawH2Stream, headers: RequestHeaders) => boolean;

export interface TakingFront {
  listen(port: number, host: string): Promise<{ port: number }>;
  /** GOAWAY to every connection; those still open after `graceMs` are ended. */
  close(graceMs: number): Promise<void>;
  /** Streams passed on to grpc-js so far (what `take` declined): should stay rare. */
  relayedStreams(): number;
}

export interface TakingFrontOptions {
  readonly limits?: Partial<RawH2Limits>;
  /** The relay session's stream and connection receive windows (node's defaults, 64 KiB, when absent). */
  readonly relayWindowBytes?: number;
}

export function rawH2TakingFront(take: RawStreamTaker, internalPort: number, options: TakingFrontOptions = {}): TakingFront {
  const relayWindow = options.relayWindowBytes;
  let relayed = 0;
  const perConnection = (socket: Socket): StreamHandler => {
    let session: ClientHttp2Session | undefined;
    const relaySession = (): ClientHttp2Session => {
      if (session === undefined || session.closed || session.destroyed) {
        session = http2.connect(`http://127.0.0.1:${internalPort}`, relayWindow === undefined ? {} : { settings: { initialWindowSize: relayWindow } });
        session.on('error', () => {});
        // The connection window starts at 64 KiB whatever SETTINGS say.
        if (relayWindow !== undefined) session.once('connect', (connected: ClientHttp2Session) => connected.setLocalWindowSize(relayWindow));
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
  const front = createRawH2Front(perConnection, options.limits);
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
