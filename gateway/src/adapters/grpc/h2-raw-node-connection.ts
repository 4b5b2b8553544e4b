/**
 * The gateway's connection to one node on our own HTTP/2 client (shared/src/http/raw-http2/client-*.ts)
 * instead of node:http2 (`grpcUpstreamRawH2`): the same contract as h2-node-connection.ts, which says
 * why each rule is there. One connection at a time, shared by every call; it counts as connected once
 * the node's SETTINGS arrive, and one that fails before that puts the node in backoff (1 s, x1.6, ±20 %,
 * at most 120 s) during which calls fail at once as never sent; GOAWAY retires it (its calls finish, the
 * next call opens another); PING while calls are in flight, the connection dropped when one goes
 * unanswered. Sockets are unref'd: a call keeps the process alive with its deadline timer.
 */
import net from 'node:net';
import {
  DEFAULT_RAW_H2_CLIENT_LIMITS,
  RawH2ClientConnection,
  type RawH2ClientLimits,
} from '../../../../shared/src/http/raw-http2/index.js';
import { ConnectBackoff, DEFAULT_WINDOW_BYTES, type NodeConnectionOptions } from './h2-node-connection.js';
import { ReconnectBackoff } from './reconnect-backoff.js';

export interface RawNodeConnectionOptions extends NodeConnectionOptions {
  /** Bounds against a hostile node; defaults in client-connection.ts, the window from `windowBytes`. */
  readonly limits?: Partial<RawH2ClientLimits>;
}

/** One HTTP/2 connection and what calls need to know about it. */
export class RawNodeSession {
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

export class RawNodeConnection {
  private current: RawNodeSession | undefined;
  private readonly backoff: ReconnectBackoff;
  private closed = false;
  private readonly keepaliveTimeMs: number;
  private readonly keepaliveTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly limits: RawH2ClientLimits;

  constructor(
    readonly address: string,
    options: RawNodeConnectionOptions = {},
  ) {
    this.keepaliveTimeMs = options.keepaliveTimeMs ?? 30_000;
    this.keepaliveTimeoutMs = options.keepaliveTimeoutMs ?? 10_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 20_000;
    this.limits = { ...DEFAULT_RAW_H2_CLIENT_LIMITS, windowBytes: options.windowBytes ?? DEFAULT_WINDOW_BYTES, ...options.limits };
    this.backoff = new ReconnectBackoff(options.backoff, options.random);
  }

  /** The session for a new call: the current one, or a new one; throws ConnectBackoff while in backoff. */
  session(): RawNodeSession {
    const current = this.current;
    if (current !== undefined && current.client.open) return current;
    if (current !== undefined) this.retire(current);
    if (this.closed) throw new ConnectBackoff('the connection is closed');
    const waiting = this.backoff.waiting();
    if (waiting !== undefined) throw new ConnectBackoff(`No connection established. Last error: ${waiting}`);
    return (this.current = this.open());
  }

  /** Stops using `session` for new calls; its calls finish. */
  retire(session: RawNodeSession): void {
    if (this.current === session) this.current = undefined;
    session.client.shutdown();
  }

  /** Closes gracefully: calls in flight finish (bounded by their deadlines), new calls fail. */
  close(): void {
    this.closed = true;
    if (this.current !== undefined) this.retire(this.current);
  }

  private open(): RawNodeSession {
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
    const session = new RawNodeSession(client);
    return session;
  }

  private backOff(reason: string): void {
    this.backoff.failed(reason);
  }
}
