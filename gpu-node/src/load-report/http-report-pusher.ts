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
 * `requestTimeoutMs` and nothing queues. The cadence, the one-report-in-flight rule, the capped
 * backoff while reports fail (interval doubling up to `maxBackoffMs`) and the outage logs are the
 * periodic reporter's (periodic-reporter.ts). It runs alone or next to the Redis reporter (each keeps
 * its own `seq`).
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { LoadReport } from '../../../shared/src/fleet/index.js';
import { PeriodicLoadReporter } from './periodic-reporter.js';
import type { PeriodicReporter, PeriodicReportOptions, ReporterLogLines } from './periodic-reporter.js';

export interface HttpReportPusherOptions extends PeriodicReportOptions {
  /** The edge's report URL (`https://edge/admin/fleet/report`) or its base URL (`https://edge`). */
  readonly reportUrl: string;
  /** The edge's fleet token (TESSERA_FLEET_TOKEN there), sent as `Authorization: Bearer`. */
  readonly token: string;
  /** Upper bound of the retry delay while reports fail; default max(2000, intervalMs). */
  readonly maxBackoffMs?: number;
  /** A request without answer fails after this long; default 2000 ms. */
  readonly requestTimeoutMs?: number;
}

export interface HttpReportPusher extends PeriodicReporter {
  /** Where reports go. */
  readonly url: string;
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

class Pusher extends PeriodicLoadReporter implements HttpReportPusher {
  readonly url: string;
  protected readonly logLines: ReporterLogLines;
  private readonly nodeId: string;
  private readonly token: string;
  private readonly leaveUrl: string;
  private readonly requestTimeoutMs: number;

  constructor(options: HttpReportPusherOptions) {
    const urls = fleetPushUrls(options.reportUrl);
    super(options, { logFields: { component: 'load-report-push', url: urls.report }, maxBackoffMs: options.maxBackoffMs ?? 2000 });
    if (options.token === '') throw TesseraError.invalidArg('pushing load reports needs a fleet token');
    this.url = urls.report;
    this.leaveUrl = urls.leave;
    this.nodeId = options.nodeId;
    this.token = options.token;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 2000;
    this.logLines = {
      started: ['pushing load reports to the edge', { intervalMs: this.intervalMs }],
      failing: ['load report pushes are failing (unreachable, slow or refused); the node keeps serving and retries', {}],
      resumed: 'load report pushes resumed',
    };
  }

  protected async send(report: LoadReport): Promise<void> {
    await this.post(this.url, JSON.stringify(report));
  }

  protected async onStop(wasRunning: boolean, deregister: boolean): Promise<void> {
    if (!wasRunning || !deregister) return;
    try {
      await this.post(this.leaveUrl, JSON.stringify({ nodeId: this.nodeId, startedAt: this.startedAt }));
      this.logger.info('left the edge fleet');
    } catch (error) {
      this.logger.warn('could not leave the edge fleet; it forgets this node when the last report goes stale', { error: this.describeError(error) });
    }
  }

  protected override describeError(error: unknown): string {
    if (error instanceof Error && error.name === 'TimeoutError') return 'request timed out';
    // fetch's "fetch failed" hides the reason (ECONNREFUSED, ENOTFOUND) in its cause.
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return error instanceof Error ? `${error.message}${cause}` : String(error);
  }

  /** POSTs JSON; throws unless the receiver answers 2xx within the timeout. */
  private async post(url: string, body: string): Promise<void> {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
      body,
      signal: AbortSignal.timeout(this.requestTimeoutMs),
    });
    // Read the body either way so the connection goes back to the pool.
    const text = await response.text().catch(() => '');
    if (!response.ok) throw new Error(`HTTP ${response.status}${text === '' ? '' : `: ${text.slice(0, 200)}`}`);
  }
}
