/**
 * The two places where the node and the gateway reach past grpc-js's public API, kept in one file.
 *
 * grpc-js creates its http2 servers inside `bindAsync` and keeps them in a private `http2Servers` map;
 * on each it listens to 'stream' with the handler that turns an HTTP/2 stream into a call. We use
 * Node's public http2 API on those servers: to widen the node's flow-control windows
 * (gpu-node/.../flow-control.ts) and to serve ModelInfer ahead of grpc-js (the node's h2-model-infer.ts,
 * the gateway's grpc-front/h2-front-infer.ts). grpc-js is pinned in package.json; the node's
 * flow-control.test.ts and h2-model-infer.test.ts and the gateway's h2-front-infer.test.ts fail if
 * either field moves.
 */
import type { Http2Server, IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { Server } from '@grpc/grpc-js';

/** The http2 servers a bound grpc-js Server listens with; empty when grpc-js no longer keeps them there. */
export function http2ServersOf(server: Server): Http2Server[] {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map)) return [];
  return [...servers.keys()].filter((s): s is Http2Server => typeof (s as Http2Server)?.updateSettings === 'function');
}

/** Serves the stream and answers true, or answers false having read and written nothing. */
export type StreamTaker<S = ServerHttp2Stream> = (stream: S, headers: IncomingHttpHeaders) => boolean;

type StreamListener = (this: Http2Server, stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) => void;

/**
 * Puts `take` in front of grpc-js on every http2 server of `server` (call it after bindAsync): each
 * new stream goes to `take` first, and to grpc-js's own listeners only when `take` declines it.
 * Returns how many servers it changed (0 when grpc-js's internals moved: grpc-js then serves all).
 */
export function takeStreamsAhead(server: Server, take: StreamTaker): number {
  const servers = http2ServersOf(server);
  for (const h2 of servers) {
    const grpcJs = h2.listeners('stream') as StreamListener[];
    h2.removeAllListeners('stream');
    h2.on('stream', function (this: Http2Server, stream: ServerHttp2Stream, headers: IncomingHttpHeaders, ...rest: unknown[]) {
      if (take(stream, headers)) return;
      for (const listener of grpcJs) listener.call(this, stream, headers, ...rest);
    });
  }
  return servers.length;
}
