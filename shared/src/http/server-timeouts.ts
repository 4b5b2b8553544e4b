/**
 * Request timeouts for our HTTP servers. Node's defaults (300 s for a whole request, checked every 30 s)
 * let a client that sends headers and then dribbles its body hold a socket and a growing buffer for
 * minutes; our request deadlines only start once a body has been read, so the server itself must bound
 * the reading. Node answers 408 when one of these expires.
 */
import type { Server } from 'node:http';

export interface ServerTimeouts {
  /** Longest time to receive a whole request (headers and body), ms; default 60 000. */
  readonly requestTimeoutMs?: number;
  /** Longest time to receive the headers, ms; default 15 000. */
  readonly headersTimeoutMs?: number;
}

export function applyServerTimeouts(server: Server, timeouts: ServerTimeouts = {}): Server {
  const requestTimeoutMs = timeouts.requestTimeoutMs ?? 60_000;
  server.requestTimeout = requestTimeoutMs;
  // Node requires headersTimeout <= requestTimeout.
  server.headersTimeout = Math.min(timeouts.headersTimeoutMs ?? 15_000, requestTimeoutMs);
  return server;
}
