/**
 * The HTTP/2 connection from the gateway to one node, shared by every call to that node: what a gRPC
 * channel does for one address, reduced to what the gateway needs.
 *
 * - One session at a time, opened by the first call and reused by every later one (HTTP/2 multiplexes
 *   them). Wide flow-control windows both ways: HTTP/2's 64 KiB default makes a burst of answers wait
 *   for WINDOW_UPDATE round trips.
 * - A session that fails before the node's SETTINGS arrived (refused, reset, timed out) has not
 *   reached the node; it puts the connection in backoff (gRPC's connection-backoff defaults: 1 s,
 *   x1.6, ±20 % jitter, at most 120 s): calls meanwhile fail at once as never sent, the first call
 *   after it tries again. A connected session that ends (the node stopped, the network dropped it) is
 *   replaced by the next call without waiting.
 * - GOAWAY: the session takes no new calls (the next call opens a new one); calls the node had taken
 *   finish on it, those above the GOAWAY's last stream id never reached the node (h2-unary-call.ts).
 * - Keepalive while calls are in flight: a PING every `keepaliveTimeMs`, the session is dropped when
 *   it goes unanswered for `keepaliveTimeoutMs` (a silent network partition then fails the calls
 *   instead of leaving them to their deadlines). No pings while idle, as grpc-js does by default:
 *   gRPC servers in C++ (Triton) answer pings without calls too often with GOAWAY.
 * - Client stream ids run out after 2^30 calls: the session is retired a little before.
 *
 * Sessions are unref'd: an idle connection never keeps the process alive; a call keeps it alive with
 * its deadline timer.
 */
import { connect } from 'node:http2';
import type { ClientHttp2Session } from 'node:http2';
import { ReconnectBackoff, type BackoffOptions } from './reconnect-backoff.js';

export type { BackoffOptions } from './reconnect-backoff.js';

export interface NodeConnectionOptions {
  /** PING period while calls are in flight; default 30000 ms. */
  readonly keepaliveTimeMs?: number;
  /** How long a PING may go unanswered before the session is dropped; default 10000 ms. */
  readonly keepaliveTimeoutMs?: number;
  /** Receive window per stream and for the session; default 16 MiB. */
  readonly windowBytes?: number;
  /** How long a connect may take before it counts as failed; default 20000 ms (gRPC's minimum connect timeout). */
  readonly connectTimeoutMs?: number;
  readonly backoff?: BackoffOptions;
  /** Randomness for the jitter, in [0, 1); default Math.random. */
  readonly random?: () => number;
}

export const DEFAULT_WINDOW_BYTES = 16 * 1024 * 1024;
/** Client stream ids are odd numbers below 2^31; retiring a little early leaves room for calls already queued. */
const MAX_CALLS_PER_SESSION = 2 ** 30 - 1024;

/** One HTTP/2 session and what calls need to know about it. */
export class NodeSession {
  /** True once the node's SETTINGS arrived: it speaks HTTP/2 on this connection. */
  connected = false;
  /** Set when the session failed or closed: the reason, for the calls it fails. */
  endReason: string | undefined;
  /** From the node's GOAWAY: streams above it were never processed. */
  goawayLastStreamId: number | undefined;
  /** Calls in flight, for keepalive. */
  inflight = 0;
  /** Calls started, for stream id exhaustion. */
  calls = 0;

  constructor(readonly h2: ClientHttp2Session) {}
}

/** Thrown by `session()` while the connection is in backoff: the call was never sent. */
export class ConnectBackoff extends Error {}

export class NodeConnection {
  private current: NodeSession | undefined;
  private readonly backoff: ReconnectBackoff;
  private closed = false;
  private readonly keepaliveTimeMs: number;
  private readonly keepaliveTimeoutMs: number;
  private readonly windowBytes: number;
  private readonly connectTimeoutMs: number;

  constructor(
    readonly address: string,
    options: NodeConnectionOptions = {},
  ) {
    this.keepaliveTimeMs = options.keepaliveTimeMs ?? 30_000;
    this.keepaliveTimeoutMs = options.keepaliveTimeoutMs ?? 10_000;
    this.windowBytes = options.windowBytes ?? DEFAULT_WINDOW_BYTES;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 20_000;
    this.backoff = new ReconnectBackoff(options.backoff, options.random);
  }

  /** The session for a new call: the current one, or a new one; throws ConnectBackoff while in backoff. */
  session(): NodeSession {
    const current = this.current;
    if (current !== undefined && !current.h2.closed && !current.h2.destroyed && current.calls < MAX_CALLS_PER_SESSION) {
      return current;
    }
    if (current !== undefined) this.retire(current);
    if (this.closed) throw new ConnectBackoff('the connection is closed');
    const waiting = this.backoff.waiting();
    if (waiting !== undefined) throw new ConnectBackoff(`No connection established. Last error: ${waiting}`);
    return (this.current = this.open());
  }

  /** Stops using `session` for new calls (after GOAWAY, or when a request on it threw); its calls finish. */
  retire(session: NodeSession): void {
    if (this.current === session) this.current = undefined;
    if (!session.h2.closed && !session.h2.destroyed) session.h2.close();
  }

  /** Closes gracefully: calls in flight finish (bounded by their deadlines), new calls fail. */
  close(): void {
    this.closed = true;
    if (this.current !== undefined) this.retire(this.current);
  }

  private open(): NodeSession {
    const h2 = connect(`http://${this.address}`, {
      settings: { initialWindowSize: this.windowBytes, enablePush: false },
      // Node's default (10 MiB) refuses new streams once that much data is buffered: tensors of a few
      // concurrent calls can hold more. The node's own limits bound what it sends.
      maxSessionMemory: Number.MAX_SAFE_INTEGER,
    });
    h2.unref();
    const session = new NodeSession(h2);
    const connectTimer = setTimeout(() => {
      h2.destroy(new Error(`connect timed out after ${this.connectTimeoutMs} ms`));
    }, this.connectTimeoutMs);
    connectTimer.unref();
    let keepalive: NodeJS.Timeout | undefined;
    let pingTimer: NodeJS.Timeout | undefined;
    // A failed attempt reports 'error' and then 'close': back off once per attempt.
    let failed = false;
    const connectFailed = (reason: string): void => {
      if (failed || session.connected) return;
      failed = true;
      this.backOff(session, reason);
    };

    // SETTINGS only widen each stream's window; the session's own starts at 64 KiB until told otherwise.
    h2.once('connect', () => h2.setLocalWindowSize(this.windowBytes));
    // Connected means the node has spoken HTTP/2 (its SETTINGS arrived), as grpc-js counts it: a
    // connection the kernel accepted for a node that died before reading it then fails as never
    // reached (the node's server sends its SETTINGS before it handles any stream).
    h2.once('remoteSettings', () => {
      clearTimeout(connectTimer);
      session.connected = true;
      this.backoff.connected();
      keepalive = setInterval(() => {
        if (session.inflight === 0 || pingTimer !== undefined || h2.destroyed) return;
        pingTimer = setTimeout(() => {
          h2.destroy(new Error(`keepalive ping not answered within ${this.keepaliveTimeoutMs} ms`));
        }, this.keepaliveTimeoutMs);
        pingTimer.unref();
        h2.ping((error) => {
          clearTimeout(pingTimer);
          pingTimer = undefined;
          if (error !== null && !h2.destroyed) h2.destroy(error);
        });
      }, this.keepaliveTimeMs);
      keepalive.unref();
    });
    h2.on('goaway', (code: number, lastStreamId: number) => {
      session.goawayLastStreamId = lastStreamId;
      session.endReason ??= `the node sent GOAWAY (code ${code})`;
      if (this.current === session) this.current = undefined;
    });
    // The calls read the details from their own streams; this keeps a session error from being uncaught.
    h2.on('error', (error: Error) => {
      session.endReason ??= error.message;
      connectFailed(error.message);
    });
    h2.once('close', () => {
      clearTimeout(connectTimer);
      clearInterval(keepalive);
      clearTimeout(pingTimer);
      session.endReason ??= 'the connection closed';
      connectFailed(session.endReason);
      if (this.current === session) this.current = undefined;
    });
    return session;
  }

  private backOff(session: NodeSession, reason: string): void {
    if (this.current === session) this.current = undefined;
    this.backoff.failed(reason);
  }
}
