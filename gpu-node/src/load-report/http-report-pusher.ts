/**
 * The node's heartbeat over HTTP, for a gateway without Redis (the Workers edge, docs/edge.md): every
 * `intervalMs` it POSTs the same LoadReport JSON the Redis reporter writes (one shared builder,
 * report-builder.ts) to the edge's `POST /admin/fleet/report`, with the fleet token as
 * `Authorization: Bearer <token>`. `stop()` POSTs `{"nodeId","startedAt"}` to `/admin/fleet/leave`,
 * so the edge drops the node at once instead of after the report's `ttlMs`.
 *
 * `reportUrl` is either the full report URL (`…/admin/fleet/report`; the leave goes to the sibling
 * `…/admin/fleet/leave`) or the edge's base URL (both paths are appended).
 *
 * Like the Redis reporter, the receiver is never on the serving path: a report fails after
 * `requestTimeoutMs`, nothing queues, failed reports are retried with a capped exponential backoff
 * (interval doubling up to `maxBackoffMs`), and an outage is logged once when it starts and once when
 * it ends. It runs alone or next to the Redis reporter (each keeps its own `seq`).
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import { assertValidNodeId } from '../../../shared/src/fleet/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import type { Logger } from '../../../shared/src/logging/index.js';
import type { ModelLoadSnapshot, StopOptions } from './load-reporter.js';
import { LoadReportBuilder } from './report-builder.js';

export interface HttpReportPusherOptions {
  /** The edge's report URL (`https://edge/admin/fleet/report`) or its base URL (`https://edge`). */
  readonly reportUrl: string;
  /** The edge's fleet token (TESSERA_FLEET_TOKEN there), sent as `Authorization: Bearer`. */
  readonly token: string;
  readonly nodeId: string;
  /** Advertised KServe HTTP address `host:port`; null when HTTP is off (the edge needs HTTP). */
  readonly httpAddress: string | null;
  /** Advertised KServe gRPC address `host:port`; null when gRPC is off. */
  readonly grpcAddress: string | null;
  /** Time between two reports; default 1000 ms. */
  readonly intervalMs?: number;
  /** The report's staleness limit; default 3000 ms; must exceed intervalMs. */
  readonly ttlMs?: number;
  /** The models READY now with their load; called once per report. */
  readonly source: () => readonly ModelLoadSnapshot[];
  /** Default: a silent logger. */
  readonly logger?: Logger;
  /** Upper bound of the retry delay while reports fail; default max(2000, intervalMs). */
  readonly maxBackoffMs?: number;
  /** A request without answer fails after this long; default 2000 ms. */
  readonly requestTimeoutMs?: number;
  /** The process's start time in the reports; default the pusher's creation time. */
  readonly startedAt?: number;
  /** The clock, ms since the epoch; default Date.now. */
  readonly now?: () => number;
}

export interface HttpReportPusher {
  /** Where reports go. */
  readonly url: string;
  /** True after a report was accepted (2xx), false after one failed (and before the first). */
  readonly connected: boolean;
  /** Reports that failed since creation (unreachable, slow, refused, or a bad snapshot); only grows. */
  readonly failures: number;
  /** The seq of the last report built; 0 before the first. */
  readonly seq: number;
  /** Starts pushing (first report at once); a no-op when started or stopped. */
  start(): void;
  /** Pushes a report now; resolves true when the receiver accepted it. Never rejects. */
  reportNow(): Promise<boolean>;
  /** Sets the report's draining flag and pushes at once when started. */
  setDraining(draining: boolean): void;
  /** Stops pushing and POSTs the leave (unless `deregister: false`). Never rejects. */
  stop(options?: StopOptions): Promise<void>;
}

export function createHttpReportPusher(options: HttpReportPusherOptions): HttpReportPusher {
  return new Pusher(options);
}

/** The report and leave URLs for `reportUrl`; throws INVALID_ARG unless it is an http(s) URL. */
export function fleetPushUrls(reportUrl: string): { report: string; leave: string } {
  let url: URL;
  try {
    url = new URL(reportUrl);
  } catch {
    throw TesseraError.invalidArg(`the report URL must be an http(s) URL, got '${reportUrl}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw TesseraError.invalidArg(`the report URL must be an http(s) URL, got '${reportUrl}'`);
  // fetch refuses URLs with credentials; the token has its own option.
  if (url.username !== '' || url.password !== '') throw TesseraError.invalidArg('the report URL must not carry credentials (use the report token)');
  url.search = '';
  url.hash = '';
  const report = new URL(url);
  const leave = new URL(url);
  if (url.pathname.endsWith('/report')) {
    leave.pathname = `${url.pathname.slice(0, -'/report'.length)}/leave`;
  } else {
    const base = url.pathname.replace(/\/+$/, '');
    report.pathname = `${base}/admin/fleet/report`;
    leave.pathname = `${base}/admin/fleet/leave`;
  }
  return { report: report.toString(), leave: leave.toString() };
}

class Pusher implements HttpReportPusher {
  readonly url: string;
  private readonly reportUrl: string;
  private readonly leaveUrl: string;
  private readonly intervalMs: number;
  private readonly maxBackoffMs: number;
  private readonly requestTimeoutMs: number;
  private readonly startedAt: number;
  private readonly now: () => number;
  private readonly logger: Logger;
  private readonly builder: LoadReportBuilder;

  private state: 'idle' | 'running' | 'stopped' = 'idle';
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<boolean> | undefined;
  private failureCount = 0;
  private isConnected = false;
  private joined = false;
  /** Set while reports fail: when the outage began and how many reports it cost (for the recovery log). */
  private outage: { since: number; failures: number } | undefined;

  constructor(private readonly options: HttpReportPusherOptions) {
    this.intervalMs = options.intervalMs ?? 1000;
    const ttlMs = options.ttlMs ?? 3000;
    if (!(this.intervalMs > 0) || !Number.isInteger(ttlMs) || ttlMs <= this.intervalMs) {
      throw TesseraError.invalidArg(`load reports need 0 < intervalMs < ttlMs (integers), got ${this.intervalMs} and ${ttlMs}`);
    }
    if (options.token === '') throw TesseraError.invalidArg('pushing load reports needs a fleet token');
    assertValidNodeId(options.nodeId);
    const urls = fleetPushUrls(options.reportUrl);
    this.reportUrl = urls.report;
    this.leaveUrl = urls.leave;
    this.url = urls.report;
    this.maxBackoffMs = Math.max(this.intervalMs, options.maxBackoffMs ?? 2000);
    this.requestTimeoutMs = options.requestTimeoutMs ?? 2000;
    this.now = options.now ?? Date.now;
    this.startedAt = options.startedAt ?? this.now();
    this.logger = (options.logger ?? silentLogger).child({ component: 'load-report-push', url: this.url });
    this.builder = new LoadReportBuilder({
      nodeId: options.nodeId,
      httpAddress: options.httpAddress,
      grpcAddress: options.grpcAddress,
      startedAt: this.startedAt,
      ttlMs,
      source: options.source,
      now: this.now,
      logger: this.logger,
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
    this.tick();
  }

  setDraining(draining: boolean): void {
    this.builder.draining = draining;
    if (this.state === 'running') void this.reportNow();
  }

  reportNow(): Promise<boolean> {
    if (this.state !== 'running') return Promise.resolve(false);
    // One report at a time: a slow receiver must not pile up concurrent POSTs.
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
    if (!wasRunning || options.deregister === false) return;
    try {
      await this.post(this.leaveUrl, JSON.stringify({ nodeId: this.options.nodeId, startedAt: this.startedAt }));
      this.logger.info('left the edge fleet');
    } catch (error) {
      this.logger.warn('could not leave the edge fleet; it forgets this node when the last report goes stale', { error: message(error) });
    }
  }

  /** Reports now, then schedules the next: the interval when it went through, a capped backoff while failing. */
  private tick(): void {
    const started = this.now();
    void this.reportNow().then(() => {
      if (this.state !== 'running') return;
      const failed = this.outage?.failures ?? 0;
      const delay =
        failed === 0
          ? // Keep the cadence from tick start to tick start; a slow report delays the next, never doubles it.
            Math.max(0, this.intervalMs - (this.now() - started))
          : Math.min(this.intervalMs * 2 ** Math.min(failed - 1, 16), this.maxBackoffMs);
      this.timer = setTimeout(() => this.tick(), delay);
      // The servers keep the process alive; a pending heartbeat alone must not.
      this.timer.unref();
    });
  }

  private async report(): Promise<boolean> {
    const report = this.builder.build();
    if (report === undefined) {
      this.failureCount++;
      return false;
    }
    try {
      await this.post(this.reportUrl, JSON.stringify(report));
    } catch (error) {
      this.onFailure(error);
      return false;
    }
    this.onSuccess();
    return true;
  }

  /** POSTs JSON; throws unless the receiver answers 2xx within the timeout. */
  private async post(url: string, body: string): Promise<void> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.options.token}` },
      body,
      signal: AbortSignal.timeout(this.requestTimeoutMs),
    });
    // Read the body either way so the connection goes back to the pool.
    const text = await response.text().catch(() => '');
    if (!response.ok) throw new Error(`HTTP ${response.status}${text === '' ? '' : `: ${text.slice(0, 200)}`}`);
  }

  private onSuccess(): void {
    this.builder.delivered();
    this.isConnected = true;
    if (this.outage !== undefined) {
      this.logger.info('load report pushes resumed', { outageMs: this.now() - this.outage.since, failedReports: this.outage.failures });
      this.outage = undefined;
    } else if (!this.joined) {
      this.logger.info('pushing load reports to the edge', { intervalMs: this.intervalMs });
    }
    this.joined = true;
  }

  private onFailure(error: unknown): void {
    this.failureCount++;
    this.isConnected = false;
    if (this.outage === undefined) {
      this.outage = { since: this.now(), failures: 0 };
      this.logger.warn('load report pushes are failing (unreachable, slow or refused); the node keeps serving and retries', { error: message(error) });
    }
    this.outage.failures++;
  }
}

function message(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'request timed out';
  // fetch's "fetch failed" hides the reason (ECONNREFUSED, ENOTFOUND) in its cause.
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return error instanceof Error ? `${error.message}${cause}` : String(error);
}
