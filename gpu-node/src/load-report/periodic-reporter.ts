/**
 * The lifecycle every load-report sink shares (load-reporter.ts writes to Redis, http-report-pusher.ts
 * POSTs to an edge): a report every `intervalMs`, built by the sink's own LoadReportBuilder; at most
 * one report in flight, so a slow receiver never piles up concurrent writes; a capped exponential
 * backoff while reports fail, for sinks that ask for one; an outage logged once when it starts and
 * once when it ends; and the `connected` / `failures` / `seq` figures that feed metrics.
 *
 * A sink says only how a report is sent (`send`, which throws on failure), what it does at stop
 * (`onStop`), and how its log lines read. The receiver is never on the serving path: nothing here
 * throws after construction, and no report is queued for later.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import { assertValidNodeId } from '../../../shared/src/fleet/index.js';
import type { LoadReport, ModelLoad } from '../../../shared/src/fleet/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import type { Logger } from '../../../shared/src/logging/index.js';
import { LoadReportBuilder } from './report-builder.js';

/** What the repository manager tells a reporter about one model; the report's `ModelLoad`. */
export type ModelLoadSnapshot = ModelLoad;

/** The options every sink takes. */
export interface PeriodicReportOptions {
  /** This node's id in its reports; see `NODE_ID_PATTERN` in shared/src/fleet. */
  readonly nodeId: string;
  /** Advertised KServe HTTP address `host:port`; null when HTTP is off. */
  readonly httpAddress: string | null;
  /** Advertised KServe gRPC address `host:port`; null when gRPC is off. */
  readonly grpcAddress: string | null;
  /** Advertised `host:port` of the LLM routes over HTTP/2 (--llm-h2c-port); absent when off. */
  readonly llmH2Address?: string;
  /** Time between two reports; default 1000 ms. */
  readonly intervalMs?: number;
  /** The report's staleness limit (for Redis also the key's TTL); default 3000 ms; must exceed intervalMs. */
  readonly ttlMs?: number;
  /** The models READY now with their load; called once per report. */
  readonly source: () => readonly ModelLoadSnapshot[];
  /** Default: a silent logger. */
  readonly logger?: Logger;
  /** The process's start time in the reports; default the reporter's creation time. */
  readonly startedAt?: number;
  /** The clock, ms since the epoch; default Date.now. */
  readonly now?: () => number;
}

export interface StopOptions {
  /** Tell the receiver the node leaves, so gateways drop it at once rather than when its report goes stale; default true. */
  readonly deregister?: boolean;
}

/** What the node sees of a sink. */
export interface PeriodicReporter {
  /** True after a report got through, false after one failed (and before the first). */
  readonly connected: boolean;
  /** Reports that failed since creation (receiver unreachable, slow or refusing, or a bad snapshot); only grows. */
  readonly failures: number;
  /** The seq of the last report built; 0 before the first. */
  readonly seq: number;
  /** Starts reporting (first report at once); a no-op when started or stopped. */
  start(): void;
  /** Sends a report now (e.g. after a model load); resolves true when the receiver took it. Never rejects. */
  reportNow(): Promise<boolean>;
  /** Sets the report's draining flag and reports at once when started. */
  setDraining(draining: boolean): void;
  /** Stops reporting and leaves as the sink does it (unless `deregister: false`). Never rejects. */
  stop(options?: StopOptions): Promise<void>;
}

/** How a sink's log lines read. */
export interface ReporterLogLines {
  /** Info, at the first report that gets through with no failure before it. */
  readonly started: readonly [message: string, fields: Record<string, unknown>];
  /** Warning, once when reports start failing; the error is added to the fields. */
  readonly failing: readonly [message: string, fields: Record<string, unknown>];
  /** Info, once when reports get through again; outage length and failed reports are added. */
  readonly resumed: string;
}

export interface PeriodicReporterSettings {
  /** Fields of every log line of the sink (its component, its receiver). */
  readonly logFields: Record<string, unknown>;
  /**
   * While reports fail, wait intervalMs, 2×, 4×… up to this (at least intervalMs) between tries.
   * Undefined keeps the interval: for a sink whose failed reports cost nothing (Redis fails them at
   * once while its client reconnects with its own backoff).
   */
  readonly maxBackoffMs: number | undefined;
}

export abstract class PeriodicLoadReporter implements PeriodicReporter {
  protected readonly intervalMs: number;
  protected readonly ttlMs: number;
  protected readonly startedAt: number;
  protected readonly now: () => number;
  protected readonly logger: Logger;
  private readonly builder: LoadReportBuilder;
  private readonly maxBackoffMs: number | undefined;

  private state: 'idle' | 'running' | 'stopped' = 'idle';
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<boolean> | undefined;
  private failureCount = 0;
  private isConnected = false;
  private everDelivered = false;
  /** Set while reports fail: when the outage began and how many reports it cost (for backoff and the recovery log). */
  private outage: { since: number; failures: number } | undefined;

  /** How this sink's log lines read; read only after construction. */
  protected abstract readonly logLines: ReporterLogLines;

  protected constructor(options: PeriodicReportOptions, settings: PeriodicReporterSettings) {
    this.intervalMs = options.intervalMs ?? 1000;
    this.ttlMs = options.ttlMs ?? 3000;
    if (!(this.intervalMs > 0) || !Number.isInteger(this.ttlMs) || this.ttlMs <= this.intervalMs) {
      throw TesseraError.invalidArg(`load reports need 0 < intervalMs < ttlMs (integers), got ${this.intervalMs} and ${this.ttlMs}`);
    }
    assertValidNodeId(options.nodeId);
    this.maxBackoffMs = settings.maxBackoffMs === undefined ? undefined : Math.max(this.intervalMs, settings.maxBackoffMs);
    this.now = options.now ?? Date.now;
    this.startedAt = options.startedAt ?? this.now();
    this.logger = (options.logger ?? silentLogger).child(settings.logFields);
    this.builder = new LoadReportBuilder({
      nodeId: options.nodeId,
      httpAddress: options.httpAddress,
      grpcAddress: options.grpcAddress,
      ...(options.llmH2Address === undefined ? {} : { llmH2Address: options.llmH2Address }),
      startedAt: this.startedAt,
      ttlMs: this.ttlMs,
      source: options.source,
      now: this.now,
      logger: this.logger,
    });
  }

  /** Sends one report; throws when the receiver did not take it. */
  protected abstract send(report: LoadReport): Promise<void>;

  /** Leaves the receiver (when `wasRunning` and `deregister`, as the sink sees fit) and frees what the sink holds. Never rejects. */
  protected abstract onStop(wasRunning: boolean, deregister: boolean): Promise<void>;

  /** Called once by `start()`, before the first report. */
  protected onStart(): void {}

  /** False while a report cannot even be tried and that is no failure (a first connection still being made). */
  protected canSend(): boolean {
    return true;
  }

  /** The error as the outage warning shows it. */
  protected describeError(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
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
    this.onStart();
    this.tick();
  }

  setDraining(draining: boolean): void {
    this.builder.draining = draining;
    if (this.state === 'running') void this.reportNow();
  }

  reportNow(): Promise<boolean> {
    if (this.state !== 'running') return Promise.resolve(false);
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
    this.isConnected = false;
    await this.onStop(wasRunning, options.deregister ?? true);
  }

  /** Reports now, then schedules the next: the interval when it went through, the backoff while failing. */
  private tick(): void {
    const started = this.now();
    void this.reportNow().then(() => {
      if (this.state !== 'running') return;
      const failed = this.outage?.failures ?? 0;
      const delay =
        failed > 0 && this.maxBackoffMs !== undefined
          ? Math.min(this.intervalMs * 2 ** Math.min(failed - 1, 16), this.maxBackoffMs)
          : // Keep the cadence from tick start to tick start; a slow report delays the next, never doubles it.
            Math.max(0, this.intervalMs - (this.now() - started));
      this.timer = setTimeout(() => this.tick(), delay);
      // The servers keep the process alive; a pending heartbeat alone must not.
      this.timer.unref();
    });
  }

  private async report(): Promise<boolean> {
    if (!this.canSend()) return false;
    const report = this.builder.build();
    if (report === undefined) {
      this.failureCount++;
      return false;
    }
    try {
      await this.send(report);
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
    if (this.outage !== undefined) {
      this.logger.info(this.logLines.resumed, { outageMs: this.now() - this.outage.since, failedReports: this.outage.failures });
      this.outage = undefined;
    } else if (!this.everDelivered) {
      this.logger.info(...this.logLines.started);
    }
    this.everDelivered = true;
  }

  private onFailure(error: unknown): void {
    this.failureCount++;
    this.isConnected = false;
    if (this.outage === undefined) {
      this.outage = { since: this.now(), failures: 0 };
      const [message, fields] = this.logLines.failing;
      this.logger.warn(message, { ...fields, error: this.describeError(error) });
    }
    this.outage.failures++;
  }
}
