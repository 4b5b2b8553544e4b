/**
 * The node's LLM routes over cleartext HTTP/2 (h2c, prior knowledge), on a port of their own: the
 * gateway keeps one session per node, so one read carries the events of many streams (over HTTP/1.1
 * every stream is a connection of its own and every event a read of its own).
 *
 * The routes are the HTTP port's own Hono app (and its streams' fast path, native-llm.ts), so a request gets the same handlers, auth, restrictions,
 * body limits and cancellation (a stream reset by the client aborts the request's signal, as a closed
 * HTTP/1.1 connection does). Only the LLM paths are served; anything else is 404 here, and the number
 * of streams one session may open at once is bounded (`maxConcurrentStreams`).
 */
import { createServer, constants, type Http2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { closeWithin, listenAddress } from './listen-address.js';
import { nativeLlmListenerOf } from './native-llm.js';

export interface LlmH2cServerOptions {
  /** Streams one session may have open at once; default 512 (the gateway's per-node stream bound is 256). */
  readonly maxConcurrentStreams?: number;
  /** A session with no frame for this long is sent GOAWAY (its open streams finish); default 120 s. */
  readonly idleSessionMs?: number;
}

export interface LlmH2cServer {
  listen(port: number, host?: string): Promise<{ port: number; host: string }>;
  /** Stops accepting sessions; sessions still open after `graceMs` (default 5 s) are destroyed. */
  close(options?: { graceMs?: number }): Promise<void>;
}

export const DEFAULT_H2C_MAX_CONCURRENT_STREAMS = 512;

const LLM_POST = /^\/(v1\/(chat\/)?completions|v2\/models\/[^/?]+(\/versions\/[^/?]+)?\/generate(_stream)?)(\?|$)/;
const LLM_GET = /^\/v1\/models(\/[^/?]+)?(\?|$)/;

/** Whether `method path` is one of the LLM routes this listener serves. */
export function isLlmRoute(method: string, path: string): boolean {
  return method === 'POST' ? LLM_POST.test(path) : method === 'GET' && LLM_GET.test(path);
}

export function createLlmH2cServer(app: Hono, options: LlmH2cServerOptions = {}): LlmH2cServer {
  const routed = getRequestListener(app.fetch) as unknown as (incoming: Http2ServerRequest, outgoing: Http2ServerResponse) => Promise<void>;
  // The streams' fast path of the HTTP server built on this app (native-llm.ts), when there is one.
  const native = nativeLlmListenerOf(app);
  let server: Http2Server | undefined;
  const sessions = new Set<ServerHttp2Session>();

  const onRequest = (incoming: Http2ServerRequest, outgoing: Http2ServerResponse): void => {
    if (!isLlmRoute(incoming.method, incoming.url)) {
      const body = JSON.stringify({ error: `${incoming.method} ${incoming.url.slice(0, 200)} is not served on the LLM HTTP/2 port` });
      outgoing.writeHead(404, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      outgoing.end(body);
      return;
    }
    if (native?.(incoming, outgoing) !== true) void routed(incoming, outgoing);
  };

  return {
    listen(port, host = '0.0.0.0') {
      if (server !== undefined) return Promise.reject(new Error('the LLM HTTP/2 server is already listening'));
      const created = createServer(
        {
          settings: { maxConcurrentStreams: options.maxConcurrentStreams ?? DEFAULT_H2C_MAX_CONCURRENT_STREAMS, maxHeaderListSize: 64 * 1024 },
          // MB one session may hold in nghttp2's buffers before it is refused new streams.
          maxSessionMemory: 64,
          maxHeaderListPairs: 256,
        },
        onRequest,
      );
      // Events are small and come one at a time per stream: without NODELAY, Nagle holds each one back
      // until the previous is acknowledged (up to a delayed ACK, ~40 ms, with a single stream).
      created.on('connection', (socket: Socket) => socket.setNoDelay(true));
      created.on('session', (session) => {
        sessions.add(session);
        session.once('close', () => sessions.delete(session));
        session.setTimeout(options.idleSessionMs ?? 120_000, () => session.close());
      });
      server = created;
      return listenAddress(created, port, host);
    },
    close({ graceMs = 5000 } = {}) {
      const current = server;
      server = undefined;
      if (current === undefined) return Promise.resolve();
      return closeWithin(
        current,
        graceMs,
        // GOAWAY: the gateway opens no new stream here; the ones in flight finish.
        () => {
          for (const session of sessions) session.close();
        },
        () => {
          for (const session of sessions) session.destroy(undefined, constants.NGHTTP2_CANCEL);
        },
      );
    },
  };
}
