/**
 * The bounds of a raw HTTP/2 client connection (client-connection.ts) against a hostile peer, and the
 * refusal it answers with when a request would pass one (nothing of that request is sent).
 */
export interface RawH2ClientLimits {
  /** Our receive window for the connection, and per stream unless `streamWindowBytes` says otherwise. */
  readonly windowBytes: number;
  /**
   * Our receive window per stream when it differs from the connection's: a small one bounds what a stream
   * whose reader paused (`holdCredit`) may leave buffered here, a wide connection window keeps the others going.
   */
  readonly streamWindowBytes?: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE we announce, and the bound on one answer header block's bytes. */
  readonly maxHeaderListBytes: number;
  /** Request bytes waiting for the peer's windows, all streams together; a request past it is refused. */
  readonly maxQueuedBytes: number;
  /** Requests waiting for a stream slot under the peer's MAX_CONCURRENT_STREAMS; one more is refused. */
  readonly maxWaitingStreams: number;
  /** A stream whose request waits this long for the peer's window is reset (CANCEL). */
  readonly sendStallMs: number;
  /** PING and SETTINGS frames from the peer allowed at once, and per second after that. */
  readonly controlBurst: number;
  readonly controlPerSecond: number;
}

export const DEFAULT_RAW_H2_CLIENT_LIMITS: RawH2ClientLimits = {
  windowBytes: 16 * 1024 * 1024,
  maxHeaderListBytes: 64 * 1024,
  maxQueuedBytes: 256 * 1024 * 1024,
  maxWaitingStreams: 10_000,
  sendStallMs: 30_000,
  controlBurst: 1000,
  controlPerSecond: 200,
};

/** A request this connection will not take (closing, or over a bound): nothing of it was sent. */
export class RawH2ClientRefusal extends Error {}
