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
 *   nothing accumulates in memory), ioredis reconnects with a capped exponential backoff, the outage
 *   is logged once when it starts and once when it ends, and `connected` / `failures` feed metrics.
 */
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import type { Logger } from '../../../shared/src/logging/index.js';
import { FLEET_EVENT_VERSION, assertValidNodeId, fleetKeys } from '../../../shared/src/fleet/index.js';
import type { JoinEvent, LeaveEvent, ModelLoad } from '../../../shared/src/fleet/index.js';
import { LoadReportBuilder } from './report-builder.js';

/** What the model manager tells the reporter about one model; the report's `ModelLoad`. */
export type ModelLoadSnapshot = ModelLoad;

export interface LoadReporterOptions {
  /** `redis://[:password@]host:port[/db]` (or `rediss://`). */
  readonly redisUrl: string;
  /** This node's id in its key; see `NODE_ID_PATTERN` in shared/src/fleet. */
  readonly nodeId: string;
  /** Advertised KServe HTTP address `host:port`; null when HTTP is off. */
  readonly httpAddress: string | null;
  /** Advertised KServe gRPC address `host:port`; null when gRPC is off. */
  readonly grpcAddress: string | null;
  /** Time between two reports; default 1000 ms. */
  readonly intervalMs?: number;
  /** TTL of the key (and the report's staleness limit); default 3000 ms; must exceed intervalMs. */
  readonly ttlMs?: number;
  /** The models READY now with their load; called once per report. */
  readonly source: () => readonly ModelLoadSnapshot[];
  /** Default: a silent logger. */
  readonly logger?: Logger;
  /** Redis key prefix; default `tessera:` (see `fleetKeys`). */
  readonly keyPrefix?: string;
  /** Upper bound of the reconnection backoff (50 ms doubling up to this); default 2000 ms. */
  readonly maxBackoffMs?: number;
  /** A command without answer fails after this long (a hung Redis); default ttlMs. */
  readonly commandTimeoutMs?: number;
  /** The process's start time in the reports; default the reporter's creation time. */
  readonly startedAt?: number;
  /** The clock, ms since the epoch; default Date.now. */
  readonly now?: () => number;
}

export interface StopOptions {
  /** Delete the key before leaving, so gateways drop the node at once; default true. */
  readonly deregister?: boolean;
}

export interface LoadReporter {
  /** The node key this reporter writes. */
  readonly key: string;
  /** True after a report succeeded, false after one failed (and before the first). */
  readonly connected: boolean;
  /** Reports that failed since creation (Redis down or slow, or a bad snapshot); only grows. */
  readonly failures: number;
  /** The seq of the last report built; 0 before the first. */
  readonly seq: number;
  /** Starts reporting (first report at once); a no-op when started or stopped. */
  start(): void;
  /** Sends a report now (e.g. after a model load); resolves true when Redis took it. Never rejects. */
  reportNow(): Promise<boolean>;
  /** Sets the report's draining flag and reports at once when started. */
  setDraining(draining: boolean): void;
  /** Stops reporting, publishes leave, deletes the key unless told not to, and closes the connection. Never rejects. */
  stop(options?: StopOptions): Promise<void>;
}

const BACKOFF_BASE_MS = 50;

export function createLoadReporter(options: LoadReporterOptions): LoadReporter {
  return new RedisLoadReporter(options);
}

class RedisLoadReporter implements LoadReporter {
  readonly key: string;
  private readonly channel: string;
  private readonly intervalMs: number;
  private readonly ttlMs: number;
  private readonly startedAt: number;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly client: Redis;
  private readonly builder: LoadReportBuilder;

  private state: 'idle' | 'running' | 'stopped' = 'idle';
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<boolean> | undefined;
  private joined = false;
  private failureCount = 0;
  private isConnected = false;
  /** Set while reports fail: when the outage began and how many reports it cost (for the recovery log). */
  private outage: { since: number; failures: number } | undefined;
  /** True until the first connection attempt succeeds or fails: reports wait for it rather than fail. */
  private firstConnect = true;

  constructor(private readonly options: LoadReporterOptions) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.ttlMs = options.ttlMs ?? 3000;
    if (!(this.intervalMs > 0) || !Number.isInteger(this.ttlMs) || this.ttlMs <= this.intervalMs) {
      throw TesseraError.invalidArg(`load reports need 0 < intervalMs < ttlMs (integers), got ${this.intervalMs} and ${this.ttlMs}`);
    }
    assertValidNodeId(options.nodeId);
    const keys = fleetKeys({ prefix: options.keyPrefix });
    this.key = keys.nodeKey(options.nodeId);
    this.channel = keys.eventsChannel;
    this.now = options.now ?? Date.now;
    this.startedAt = options.startedAt ?? this.now();
    this.logger = (options.logger ?? silentLogger).child({ component: 'load-report', redis: redactUrl(options.redisUrl) });
    this.builder = new LoadReportBuilder({
      nodeId: options.nodeId,
      httpAddress: options.httpAddress,
      grpcAddress: options.grpcAddress,
      startedAt: this.startedAt,
      ttlMs: this.ttlMs,
      source: options.source,
      now: this.now,
      logger: this.logger,
    });
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
      if (this.state === 'running') void this.reportNow();
    });
  }

  get connected(): boolean {
    return this.isConnected;
  }

  get failures(): number {
    return this.failureCount;
  }

  get seq(): number {
    return this.builder.seq;
  }

  start(): void {
    if (this.state !== 'idle') return;
    this.state = 'running';
    // The first report goes out on 'ready' (a command sent before would fail, with no offline
    // queue); if Redis is down, the first timer tick fails and reports the outage. The retry
    // strategy keeps reconnecting whatever connect() says.
    this.client.connect().catch(() => {});
    this.schedule(this.intervalMs);
  }

  setDraining(draining: boolean): void {
    this.builder.draining = draining;
    if (this.state === 'running') void this.reportNow();
  }

  reportNow(): Promise<boolean> {
    if (this.state !== 'running') return Promise.resolve(false);
    // One report at a time: a slow Redis must not pile up concurrent SETs.
    this.inFlight ??= this.report().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  async stop(options: StopOptions = {}): Promise<void> {
    if (this.state === 'stopped') return;
    const wasRunning = this.state === 'running';
    this.state = 'stopped';
    clearTimeout(this.timer);
    await this.inFlight;
    const deregister = options.deregister ?? true;
    if (wasRunning && this.client.status === 'ready') {
      const leave: LeaveEvent = {
        version: FLEET_EVENT_VERSION,
        type: 'leave',
        nodeId: this.options.nodeId,
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
        this.logger.warn('could not leave the fleet cleanly; the key expires by its TTL', { key: this.key, error: message(error) });
      }
    } else if (wasRunning) {
      this.logger.warn('Redis unreachable at stop; the key expires by its TTL', { key: this.key, ttlMs: this.ttlMs });
    }
    this.isConnected = false;
    await this.close();
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      const started = this.now();
      void this.reportNow().then(() => {
        if (this.state !== 'running') return;
        // Keep the cadence from tick start to tick start; a slow report delays the next, never doubles it.
        this.schedule(Math.max(0, this.intervalMs - (this.now() - started)));
      });
    }, delayMs);
    // The servers keep the process alive; a pending heartbeat alone must not.
    this.timer.unref();
  }

  private async report(): Promise<boolean> {
    // A slow first connection is not an outage: without this, a tick that beats the handshake
    // would count a failure and log a spurious warning at every start.
    if (this.firstConnect) return false;
    const report = this.builder.build();
    if (report === undefined) {
      this.failureCount++;
      return false;
    }
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
      this.onFailure(error);
      return false;
    }
    this.onSuccess();
    return true;
  }

  private onSuccess(): void {
    this.builder.delivered();
    this.isConnected = true;
    if (!this.joined) {
      this.joined = true;
      if (this.outage === undefined) this.logger.info('joined the fleet in Redis', { key: this.key, ttlMs: this.ttlMs });
    }
    if (this.outage !== undefined) {
      this.logger.info('load reports to Redis resumed', {
        outageMs: this.now() - this.outage.since,
        failedReports: this.outage.failures,
      });
      this.outage = undefined;
    }
  }

  private onFailure(error: unknown): void {
    this.failureCount++;
    this.isConnected = false;
    // Join again on recovery: the key may have expired and gateways dropped us meanwhile.
    this.joined = false;
    if (this.outage === undefined) {
      this.outage = { since: this.now(), failures: 0 };
      this.logger.warn('load reports to Redis are failing (unreachable or refusing writes); the node keeps serving and retries', {
        key: this.key,
        error: message(error),
      });
    }
    this.outage.failures++;
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

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
