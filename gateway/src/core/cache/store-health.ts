/**
 * Whether the cache store (Redis) may be used right now, and the one-log-line-per-outage rule.
 *
 * The first failed get/set opens an outage: one warning, then requests bypass the cache WITHOUT
 * touching the store, except one probe per `probeIntervalMs`, so that a hung Redis does not add its
 * command timeout to every request. The first successful probe closes the outage with one info line
 * (how long it lasted, how many store calls were skipped or failed meanwhile).
 */
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import type { Clock } from '../ports/index.js';

/** The part of the Clock port the cache reads. */
export type WallClock = Pick<Clock, 'now'>;

export class StoreHealth {
  private healthy = true;
  private outageStartedAt = 0;
  private nextProbeAt = 0;
  private skipped = 0;
  private failures = 0;

  constructor(
    private readonly logger: Logger,
    private readonly clock: WallClock,
    private readonly probeIntervalMs: number,
  ) {}

  get inOutage(): boolean {
    return !this.healthy;
  }

  /** True when the caller may call the store now (always while healthy; one probe per interval otherwise). */
  mayUse(): boolean {
    if (this.healthy) return true;
    const now = this.clock.now();
    if (now >= this.nextProbeAt) {
      this.nextProbeAt = now + this.probeIntervalMs;
      return true;
    }
    this.skipped += 1;
    return false;
  }

  succeeded(): void {
    if (this.healthy) return;
    this.healthy = true;
    this.logger.info('response cache store is reachable again; caching resumed', {
      outageMs: this.clock.now() - this.outageStartedAt,
      failedCalls: this.failures,
      skippedCalls: this.skipped,
    });
  }

  failed(operation: 'get' | 'set', error: unknown): void {
    const now = this.clock.now();
    this.nextProbeAt = now + this.probeIntervalMs;
    if (!this.healthy) {
      this.failures += 1;
      return;
    }
    this.healthy = false;
    this.outageStartedAt = now;
    this.failures = 1;
    this.skipped = 0;
    this.logger.warn('response cache store failed; requests bypass the cache until it recovers', {
      operation,
      error: error instanceof Error ? error.message : String(error),
      probeIntervalMs: this.probeIntervalMs,
    });
  }
}
