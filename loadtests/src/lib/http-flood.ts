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
 * The worker is plain CommonJS evaluated from a string (`eval: true`), so it runs without the
 * TypeScript loader the bench itself uses.
 */
import { Worker } from 'node:worker_threads';
import { summarizeLatencies, type LatencySummary } from './percentiles.js';

export interface HttpFloodOptions {
  readonly host: string;
  readonly port: number;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
  /** Worker threads; default 2. */
  readonly threads?: number;
  /** Keep-alive sockets (= requests in flight) per thread; default 32. */
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

interface WorkerReport {
  readonly completed: number;
  readonly errors: number;
  readonly mismatched: Record<string, number>;
  readonly firstError: string | null;
  readonly windowMs: number;
  readonly latenciesUs: Float64Array;
}

const WORKER_SOURCE = `
const { parentPort, workerData: d } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: d.connections, maxFreeSockets: d.connections });
const body = d.body ? Buffer.from(d.body) : null;
const headers = Object.assign({}, d.headers, body ? { 'Content-Length': String(body.length) } : {});
let running = true, measuring = false, completed = 0, errors = 0, firstError = null;
const mismatched = {};
let latencies = new Float64Array(1 << 16), n = 0;
const record = (us) => {
  if (n === latencies.length) { const grown = new Float64Array(n * 2); grown.set(latencies); latencies = grown; }
  latencies[n++] = us;
};
const fail = (message) => { if (firstError === null) firstError = message; if (measuring) errors++; };
function once() {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request({ host: d.host, port: d.port, path: d.path, method: d.method, agent, headers }, (res) => {
      res.on('data', () => {});
      res.on('error', (e) => { fail(e.message); resolve(); });
      res.on('end', () => {
        const header = d.expectHeader ? res.headers[d.expectHeader.name] : undefined;
        if (res.statusCode !== d.expectStatus) fail('HTTP ' + res.statusCode);
        else if (d.expectHeader && header !== d.expectHeader.value) {
          if (measuring) mismatched[String(header)] = (mismatched[String(header)] || 0) + 1;
        }
        else if (measuring) { completed++; record((performance.now() - t0) * 1000); }
        resolve();
      });
    });
    req.on('error', (e) => { fail(e.message); setTimeout(resolve, 10); });
    req.end(body === null ? undefined : body);
  });
}
async function caller() { while (running) await once(); }
const callers = Array.from({ length: d.connections }, caller);
setTimeout(() => {
  measuring = true;
  const start = performance.now();
  setTimeout(async () => {
    measuring = false;
    const windowMs = performance.now() - start;
    running = false;
    await Promise.all(callers);
    agent.destroy();
    const out = latencies.slice(0, n);
    parentPort.postMessage({ completed, errors, mismatched, firstError, windowMs, latenciesUs: out }, [out.buffer]);
  }, d.measureMs);
}, d.warmupMs);
`;

function runWorker(options: HttpFloodOptions, connections: number): Promise<WorkerReport> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
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
      },
    });
    worker.once('message', (report: WorkerReport) => resolve(report));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`http-flood worker exited with code ${code}`));
    });
  });
}

export async function runHttpFlood(options: HttpFloodOptions): Promise<HttpFloodResult> {
  const threads = options.threads ?? 2;
  const connections = options.connections ?? 32;
  const reports = await Promise.all(Array.from({ length: threads }, () => runWorker(options, connections)));
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
