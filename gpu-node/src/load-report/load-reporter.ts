/**
 * The node's heartbeat in Redis: every `intervalMs` it SETs its load report under its node key with
 * `PX ttlMs` (one round trip), so gateways see its models and load and forget it by themselves when
 * it dies. Layout and report shape: `shared/src/fleet/`.
 *
 * - The first report goes out as soon as the connection is ready. The first successful one after
 *   `start()` — and after every Redis outage, since the key may have expired meanwhile — is
 *   pipelined with a PUBLISH of a `join` event (still one round trip).
 * - `stop()` publishes `leave` and, by default, DELetes the key (the node's SIGTERM path).
 * - Redis is never on the serving path: when it is down, reports fail fast (no offline queue, so
 *   nothing accumulates in memory) and ioredis reconnects with a capped exponential backoff.
 *
 * The cadence, the one-report-in-flight rule, the outage logs and the `connected` / `failures`
 * figures are the periodic reporter's (periodic-reporter.ts), shared with the HTTP pusher.
 */
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { FLEET_EVENT_VERSION, fleetKeys } from '../../../shared/src/fleet/index.js';
import type { JoinEvent, LeaveEvent, LoadReport } from '../../../shared/src/fleet/index.js';
import { PeriodicLoadReporter } from './periodic-reporter.js';
import type { PeriodicReporter, PeriodicReportOptions, ReporterLogLines } from './periodic-reporter.js';

export interface LoadReporterOptions extends PeriodicReportOptions {
  /** `redis://[:password@]host:port[/db]` (or `rediss://`). */
  readonly redisUrl: string;
  /** Redis key prefix; default `tessera:` (see `fleetKeys`). */
  readonly keyPrefix?: string;
  /** Upper bound of the reconnection backoff (50 ms doubling up to this); default 2000 ms. */
  readonly maxBackoffMs?: number;
  /** A command without answer fails after this long (a hung Redis); default ttlMs. */
  readonly commandTimeoutMs?: number;
}

export interface LoadReporter extends PeriodicReporter {
  /** The node key this reporter writes. */
  readonly key: string;
}

const BACKOFF_BASE_MS = 50;

export function createLoadReporter(options: LoadReporterOptions): LoadReporter {
  return new RedisLoadReporter(options);
}

class RedisLoadReporter extends PeriodicLoadReporter implements LoadReporter {
  readonly key: string;
  protected readonly logLines: ReporterLogLines;
  private readonly nodeId: string;
  private readonly channel: string;
  private readonly client: Redis;
  /** False until a report got through, and again after a failure: the next report then PUBLISHes a join. */
  private joined = false;
  /** True until the first connection attempt succeeds or fails: reports wait for it rather than fail. */
  private firstConnect = true;

  constructor(options: LoadReporterOptions) {
    // ioredis owns the reconnection backoff, and a report while disconnected fails at once without
    // I/O: reports keep their cadence, so the first one after a reconnection is never late.
    super(options, { logFields: { component: 'load-report', redis: redactUrl(options.redisUrl) }, maxBackoffMs: undefined });
    this.nodeId = options.nodeId;
    const keys = fleetKeys({ prefix: options.keyPrefix });
    this.key = keys.nodeKey(options.nodeId);
    this.channel = keys.eventsChannel;
    this.logLines = {
      started: ['joined the fleet in Redis', { key: this.key, ttlMs: this.ttlMs }],
      failing: ['load reports to Redis are failing (unreachable or refusing writes); the node keeps serving and retries', { key: this.key }],
      resumed: 'load reports to Redis resumed',
    };
    const maxBackoffMs = options.maxBackoffMs ?? 2000;
    const redisOptions: RedisOptions = {
      lazyConnect: true,
      // Fail fast while disconnected: a report that cannot go now is worthless later, and queueing
      // them would grow memory for as long as Redis is down.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: options.commandTimeoutMs ?? this.ttlMs,
      connectTimeout: Math.max(1000, this.ttlMs),
      // ioredis reconnects forever with this delay; null would give up, which a node must never do.
      retryStrategy: (attempt) => Math.min(BACKOFF_BASE_MS * 2 ** Math.min(attempt - 1, 16), maxBackoffMs),
    };
    this.client = new Redis(options.redisUrl, redisOptions);
    // Without a listener ioredis prints every connection error; the outage is logged by report results instead.
    this.client.on('error', (error: Error) => {
      this.firstConnect = false;
      this.logger.verbose(2, 'redis connection error', { error: error.message });
    });
    this.client.on('close', () => {
      this.firstConnect = false;
    });
    // Report as soon as a (re)connection is ready, rather than up to one interval later.
    this.client.on('ready', () => {
      this.firstConnect = false;
      void this.reportNow();
    });
  }

  protected override onStart(): void {
    // The first report goes out on 'ready' (a command sent before would fail, with no offline
    // queue); if Redis is down, the next tick fails and reports the outage. The retry strategy
    // keeps reconnecting whatever connect() says.
    this.client.connect().catch(() => {});
  }

  // A slow first connection is not an outage: without this, a tick that beats the handshake
  // would count a failure and log a spurious warning at every start.
  protected override canSend(): boolean {
    return !this.firstConnect;
  }

  protected async send(report: LoadReport): Promise<void> {
    const json = JSON.stringify(report);
    try {
      if (this.joined) {
        await this.client.set(this.key, json, 'PX', this.ttlMs);
      } else {
        const join: JoinEvent = {
          version: FLEET_EVENT_VERSION,
          type: 'join',
          nodeId: report.nodeId,
          startedAt: report.startedAt,
          sentAt: report.sentAt,
          report,
        };
        throwFirstError(await this.client.pipeline().set(this.key, json, 'PX', this.ttlMs).publish(this.channel, JSON.stringify(join)).exec());
      }
    } catch (error) {
      // Join again on recovery: the key may have expired and gateways dropped us meanwhile.
      this.joined = false;
      throw error;
    }
    this.joined = true;
  }

  protected async onStop(wasRunning: boolean, deregister: boolean): Promise<void> {
    if (wasRunning && this.client.status === 'ready') {
      const leave: LeaveEvent = {
        version: FLEET_EVENT_VERSION,
        type: 'leave',
        nodeId: this.nodeId,
        startedAt: this.startedAt,
        sentAt: this.now(),
        deregistered: deregister,
      };
      const pipeline = this.client.pipeline();
      if (deregister) pipeline.del(this.key);
      pipeline.publish(this.channel, JSON.stringify(leave));
      try {
        throwFirstError(await pipeline.exec());
        this.logger.info(deregister ? 'deregistered from Redis' : 'left the fleet; the key expires by its TTL', { key: this.key });
      } catch (error) {
        this.logger.warn('could not leave the fleet cleanly; the key expires by its TTL', { key: this.key, error: this.describeError(error) });
      }
    } else if (wasRunning) {
      this.logger.warn('Redis unreachable at stop; the key expires by its TTL', { key: this.key, ttlMs: this.ttlMs });
    }
    await this.close();
  }

  private async close(): Promise<void> {
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // fall through to a hard close
      }
    }
    this.client.disconnect();
  }
}

/** Pipeline results carry per-command errors instead of rejecting: surface the first one. */
function throwFirstError(results: [Error | null, unknown][] | null): void {
  if (results === null) throw new Error('pipeline was not executed (connection closed)');
  for (const [error] of results) if (error) throw error;
}

/** The URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparsable redis url>';
  }
}
