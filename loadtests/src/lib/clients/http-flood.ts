/**
 * Maximum-throughput HTTP load: one fixed request sent closed-loop over `connections` keep-alive
 * sockets in each of `threads` worker threads. For servers fast enough that one load-generator event
 * loop would be the bottleneck (a cache hit, a hello-world), which would make two servers look equally
 * fast; with several threads the generator has more CPU than the server's single event loop.
 *
 * Each worker warms up, then counts the requests that complete inside its own window of `measureMs`;
 * the totals are summed (the windows start within milliseconds of each other). A response counts only
 * with the expected status and, if asked, the expected header value (e.g. `x-cache: HIT`), so a server
 * answering the wrong thing fast is not benchmarked; the others are counted as errors (another status,
 * transport errors) or as mismatched (the right status, another header value).
 *
 * Each worker (http-flood-worker.ts) drives the raw HTTP engine (raw-http.ts) with the request encoded
 * once, so the generator's own CPU per request stays near a bare socket's rather than node:http's.
 * Workers are TypeScript modules started through shared's tsx bootstrap (Node 20 threads do not
 * inherit the bench's loader).
 */
import { startModuleWorker } from '../../../../shared/src/workers/index.js';
import type { FloodWorkerData, FloodWorkerMessage, FloodWorkerReport } from './http-flood-worker.js';
import { summarizeLatencies, type LatencySummary } from '../sampling/percentiles.js';

export interface HttpFloodOptions {
  readonly host: string;
  readonly port: number;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
  /** Worker threads; default 2. */
  readonly threads?: number;
  /** Keep-alive connections (= requests in flight) per thread; default 32. */
  readonly connections?: number;
  readonly warmupMs: number;
  readonly measureMs: number;
  /** Default 200. */
  readonly expectStatus?: number;
  /** A header (lowercase name) every counted response must carry with this value; default none. */
  readonly expectHeader?: { readonly name: string; readonly value: string };
}

export interface HttpFloodResult {
  readonly threads: number;
  readonly connections: number;
  readonly completed: number;
  /** Responses with another status, and transport errors, in the windows. */
  readonly errors: number;
  /** Responses with the expected status but not the expected header value (e.g. a cache MISS or BYPASS). */
  readonly mismatched: number;
  /** The header values seen on mismatched responses, with their counts. */
  readonly mismatchedValues: Readonly<Record<string, number>>;
  readonly firstError?: string;
  readonly windowS: number;
  readonly requestsPerSec: number;
  readonly latency: LatencySummary;
}

const WORKER_ENTRY = new URL('./http-flood-worker.ts', import.meta.url);

interface FloodThread {
  /** Resolves when the thread has loaded and waits for `start`. */
  readonly ready: Promise<void>;
  readonly report: Promise<FloodWorkerReport>;
  start(): void;
  stop(): void;
}

function startThread(options: HttpFloodOptions, connections: number): FloodThread {
  const data: FloodWorkerData = {
    host: options.host,
    port: options.port,
    method: options.method,
    path: options.path,
    headers: options.headers ?? {},
    body: options.body ?? null,
    connections,
    warmupMs: options.warmupMs,
    measureMs: options.measureMs,
    expectStatus: options.expectStatus ?? 200,
    expectHeader: options.expectHeader ?? null,
  };
  const worker = startModuleWorker(WORKER_ENTRY, data);
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const report = new Promise<FloodWorkerReport>((resolve, reject) => {
    worker.on('message', (message: FloodWorkerMessage) => {
      if (message.type === 'ready') markReady();
      else resolve(message.report);
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`http-flood worker exited with code ${code} before reporting`)));
  });
  // Marked handled here: a stopped thread's report is never awaited. Awaiting it still sees the rejection.
  report.catch(() => undefined);
  return {
    // A thread that dies while loading must not leave runHttpFlood waiting for its `ready`.
    ready: Promise.race([ready, report.then(() => undefined)]),
    report,
    start: () => worker.postMessage('start'),
    stop: () => void worker.terminate(),
  };
}

export async function runHttpFlood(options: HttpFloodOptions): Promise<HttpFloodResult> {
  const threads = options.threads ?? 2;
  const connections = options.connections ?? 32;
  const flood = Array.from({ length: threads }, () => startThread(options, connections));
  try {
    await Promise.all(flood.map((thread) => thread.ready));
  } catch (error) {
    for (const thread of flood) thread.stop();
    throw error;
  }
  // All threads have loaded: their windows start together.
  for (const thread of flood) thread.start();
  const reports = await Promise.all(flood.map((thread) => thread.report));
  const completed = reports.reduce((sum, r) => sum + r.completed, 0);
  const errors = reports.reduce((sum, r) => sum + r.errors, 0);
  const windowS = reports.reduce((sum, r) => sum + r.windowMs, 0) / reports.length / 1000;
  const firstError = reports.find((r) => r.firstError !== null)?.firstError ?? undefined;
  const mismatchedValues: Record<string, number> = {};
  for (const r of reports) for (const [value, n] of Object.entries(r.mismatched)) mismatchedValues[value] = (mismatchedValues[value] ?? 0) + n;
  const latencies: number[] = [];
  for (const r of reports) for (const us of r.latenciesUs) latencies.push(us);
  return {
    threads,
    connections,
    completed,
    errors,
    mismatched: Object.values(mismatchedValues).reduce((a, b) => a + b, 0),
    mismatchedValues,
    ...(firstError !== undefined ? { firstError } : {}),
    windowS,
    // Each thread's own rate, summed: threads' windows have the same length but not the same start.
    requestsPerSec: reports.reduce((sum, r) => sum + (r.windowMs > 0 ? r.completed / (r.windowMs / 1000) : 0), 0),
    latency: summarizeLatencies(latencies),
  };
}
