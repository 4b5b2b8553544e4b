/**
 * The HTTP/2 connection from the gateway to one node, on our own HTTP/2 client
 * (shared/src/http/raw-http2/client-*.ts), shared by every call to that node, unary and streamed: what a
 * gRPC channel does for one address, reduced to what the gateway needs. It replaced node:http2's client
 * (issue 17), which cost more CPU per call (docs/benchmarks.md).
 *
 * - One connection at a time, opened by the first call and reused by every later one (HTTP/2 multiplexes
 *   them). Wide flow-control windows both ways: HTTP/2's 64 KiB default makes a burst of answers wait
 *   for WINDOW_UPDATE round trips.
 * - A connection that fails before the node's SETTINGS arrived (refused, reset, timed out) has not
 *   reached the node; it puts the node in backoff (gRPC's connection-backoff defaults: 1 s, x1.6,
 *   ±20 % jitter, at most 120 s): calls meanwhile fail at once as never sent, the first call after it
 *   tries again. A connected one that ends (the node stopped, the network dropped it) is replaced by the
 *   next call without waiting.
 * - GOAWAY: the connection takes no new calls (the next call opens another); calls the node had taken
 *   finish on it, those above the GOAWAY's last stream id never reached the node (h2-call.ts).
 * - Keepalive while calls are in flight: a PING every `keepaliveTimeMs`, the connection dropped when one
 *   goes unanswered for `keepaliveTimeoutMs` (a silent partition then fails the calls before their
 *   deadlines). No pings while idle, as grpc-js does by default: gRPC servers in C++ (Triton) answer
 *   pings without calls too often with GOAWAY.
 * - Client stream ids running out (2^31) close the connection to new calls (client-connection.ts's `open`).
 *
 * Sockets are unref'd: an idle connection never keeps the process alive; a call keeps it alive with its
 * deadline timer.
 */
import net from 'node:net';
import {
  DEFAULT_RAW_H2_CLIENT_LIMITS,
  RawH2ClientConnection,
  type RawH2ClientLimits,
} from '../../../../shared/src/http/raw-http2/index.js';
import { ReconnectBackoff, type BackoffOptions } from './reconnect-backoff.js';

export type { BackoffOptions } from './reconnect-backoff.js';

export interface NodeConnectionOptions {
  /** PING period while calls are in flight; default 30000 ms. */
  readonly keepaliveTimeMs?: number;
  /** How long a PING may go unanswered before the connection is dropped; default 10000 ms. */
  readonly keepaliveTimeoutMs?: number;
  /** Receive window per stream and for the connection; default 16 MiB. */
  readonly windowBytes?: number;
  /** How long a connect may take before it counts as failed; default 20000 ms (gRPC's minimum connect timeout). */
  readonly connectTimeoutMs?: number;
  readonly backoff?: BackoffOptions;
  /** Randomness for the jitter, in [0, 1); default Math.random. */
  readonly random?: () => number;
  /** Bounds against a hostile node; defaults in client-connection.ts, the window from `windowBytes`. */
  readonly limits?: Partial<RawH2ClientLimits>;
}

export const DEFAULT_WINDOW_BYTES = 16 * 1024 * 1024;

/** Thrown by `session()` while the connection is in backoff: the call was never sent. */
export class ConnectBackoff extends Error {}

/** One HTTP/2 connection and what calls need to know about it. */
export class NodeSession {
  /** True once the node's SETTINGS arrived. */
  connected = false;
  /** Set when the connection failed, closed or got GOAWAY: the reason, for the calls it fails. */
  endReason: string | undefined;
  goawayLastStreamId: number | undefined;
  /** Calls in flight, for keepalive. */
  inflight = 0;

  constructor(readonly client: RawH2ClientConnection) {}
}

/** `host:port` or `[v6]:port`. */
function hostAndPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host: host.length > 0 ? host : '127.0.0.1', port: Number(address.slice(colon + 1)) };
}

export class NodeConnection {
  private current: NodeSession | undefined;
  private readonly backoff: ReconnectBackoff;
  private closed = false;
  private readonly keepaliveTimeMs: number;
  private readonly keepaliveTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly limits: RawH2ClientLimits;

  constructor(
    readonly address: string,
    options: NodeConnectionOptions = {},
  ) {
    this.keepaliveTimeMs = options.keepaliveTimeMs ?? 30_000;
    this.keepaliveTimeoutMs = options.keepaliveTimeoutMs ?? 10_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 20_000;
    this.limits = { ...DEFAULT_RAW_H2_CLIENT_LIMITS, windowBytes: options.windowBytes ?? DEFAULT_WINDOW_BYTES, ...options.limits };
    this.backoff = new ReconnectBackoff(options.backoff, options.random);
  }

  /** The session for a new call: the current one, or a new one; throws ConnectBackoff while in backoff. */
  session(): NodeSession {
    const current = this.current;
    if (current !== undefined && current.client.open) return current;
    if (current !== undefined) this.retire(current);
    if (this.closed) throw new ConnectBackoff('the connection is closed');
    const waiting = this.backoff.waiting();
    if (waiting !== undefined) throw new ConnectBackoff(`No connection established. Last error: ${waiting}`);
    return (this.current = this.open());
  }

  /** Stops using `session` for new calls; its calls finish. */
  retire(session: NodeSession): void {
    if (this.current === session) this.current = undefined;
    session.client.shutdown();
  }

  /** Closes gracefully: calls in flight finish (bounded by their deadlines), new calls fail. */
  close(): void {
    this.closed = true;
    if (this.current !== undefined) this.retire(this.current);
  }

  /** Closes at once: calls in flight end with `reason` (a gateway shutting down), new calls fail. */
  destroy(reason: string): void {
    this.closed = true;
    const current = this.current;
    this.current = undefined;
    current?.client.destroy(reason);
  }

  private open(): NodeSession {
    const socket = net.connect(hostAndPort(this.address));
    socket.unref();
    let keepalive: NodeJS.Timeout | undefined;
    let pingTimer: NodeJS.Timeout | undefined;
    const connectTimer = setTimeout(() => client.destroy(`connect timed out after ${this.connectTimeoutMs} ms`), this.connectTimeoutMs).unref();
    const client: RawH2ClientConnection = new RawH2ClientConnection(socket, this.limits, {
      ready: () => {
        clearTimeout(connectTimer);
        session.connected = true;
        this.backoff.connected();
        keepalive = setInterval(() => {
          if (session.inflight === 0 || pingTimer !== undefined) return;
          pingTimer = setTimeout(() => client.destroy(`keepalive ping not answered within ${this.keepaliveTimeoutMs} ms`), this.keepaliveTimeoutMs).unref();
          client.ping(() => {
            clearTimeout(pingTimer);
            pingTimer = undefined;
          });
        }, this.keepaliveTimeMs).unref();
      },
      goaway: (lastStreamId, code) => {
        session.goawayLastStreamId = lastStreamId;
        session.endReason ??= `the node sent GOAWAY (code ${code})`;
        if (this.current === session) this.current = undefined;
      },
      close: (reason) => {
        clearTimeout(connectTimer);
        clearInterval(keepalive);
        clearTimeout(pingTimer);
        session.endReason ??= reason;
        if (this.current === session) this.current = undefined;
        if (!session.connected) this.backOff(reason);
      },
    });
    const session = new NodeSession(client);
    return session;
  }

  private backOff(reason: string): void {
    this.backoff.failed(reason);
  }
}
