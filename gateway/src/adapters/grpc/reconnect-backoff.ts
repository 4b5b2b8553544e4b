/**
 * When a node connection may try to connect again: after a failed connect it waits, growing by a factor per
 * further failure up to a cap, with random spread; a connect that reaches HTTP/2 resets it. One clock for
 * both node connections (h2-node-connection.ts on node:http2, h2-raw-node-connection.ts on our own client).
 */
export interface BackoffOptions {
  /** Wait after the first failed connect; default 1000 ms. */
  readonly initialMs?: number;
  /** Growth per further failure; default 1.6. */
  readonly multiplier?: number;
  /** Random spread, as a fraction either way; default 0.2. */
  readonly jitter?: number;
  /** Longest wait; default 120000 ms. */
  readonly maxMs?: number;
}

export class ReconnectBackoff {
  private retryAt = 0;
  private nextMs: number;
  private lastError = '';
  private readonly settings: Required<BackoffOptions>;

  constructor(
    options: BackoffOptions = {},
    private readonly random: () => number = Math.random,
  ) {
    this.settings = {
      initialMs: options.initialMs ?? 1000,
      multiplier: options.multiplier ?? 1.6,
      jitter: options.jitter ?? 0.2,
      maxMs: options.maxMs ?? 120_000,
    };
    this.nextMs = this.settings.initialMs;
  }

  /** Why no connect may be tried now (the last failure), or undefined when one may. */
  waiting(now = Date.now()): string | undefined {
    return now < this.retryAt ? this.lastError : undefined;
  }

  /** A connect failed (or a connection broke) for `reason`: wait before the next. */
  failed(reason: string): void {
    this.lastError = reason;
    const spread = 1 + this.settings.jitter * (2 * this.random() - 1);
    this.retryAt = Date.now() + this.nextMs * spread;
    this.nextMs = Math.min(this.settings.maxMs, this.nextMs * this.settings.multiplier);
  }

  /** The node spoke HTTP/2: the next failure waits the initial time again. */
  connected(): void {
    this.nextMs = this.settings.initialMs;
    this.retryAt = 0;
  }
}
