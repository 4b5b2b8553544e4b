/**
 * One thread of runHttpFlood (http-flood.ts): `connections` callers, each sending the same pre-encoded
 * request closed-loop over its own keep-alive connection of the raw HTTP engine (raw-http.ts), so the
 * thread spends its CPU on the wire rather than on node:http.
 *
 * Protocol: the thread loads (tsx registration takes a while, and not equally long in every thread),
 * posts `ready`, waits for `start` so that all threads' windows begin together, warms up, counts the
 * answers that complete inside its window of `measureMs`, then posts one `report` and exits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createRawHttpPool, encodeRawRequest, hostHeader, type RawHttpResponse } from './raw-http.js';

export interface FloodWorkerData {
  readonly host: string;
  readonly port: number;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | null;
  readonly connections: number;
  readonly warmupMs: number;
  readonly measureMs: number;
  readonly expectStatus: number;
  readonly expectHeader: { readonly name: string; readonly value: string } | null;
}

export interface FloodWorkerReport {
  readonly completed: number;
  readonly errors: number;
  /** Header values of the answers with the expected status but another header value, with counts. */
  readonly mismatched: Record<string, number>;
  readonly firstError: string | null;
  readonly windowMs: number;
  readonly latenciesUs: Float64Array;
}

export type FloodWorkerMessage = { readonly type: 'ready' } | { readonly type: 'report'; readonly report: FloodWorkerReport };

/** After a transport error a caller pauses, so a dead server does not turn the loop into a spin. */
const ERROR_PAUSE_MS = 10;

async function flood(d: FloodWorkerData, request: Buffer): Promise<FloodWorkerReport> {
  const pool = createRawHttpPool({ host: d.host, port: d.port, connections: d.connections });
  let running = true;
  let measuring = false;
  let completed = 0;
  let errors = 0;
  let firstError: string | null = null;
  const mismatched: Record<string, number> = {};
  let latencies = new Float64Array(1 << 16);
  let n = 0;

  const record = (us: number): void => {
    if (n === latencies.length) {
      const grown = new Float64Array(n * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[n++] = us;
  };
  const fail = (message: string): void => {
    firstError ??= message;
    if (measuring) errors += 1;
  };
  const check = (response: RawHttpResponse, t0: number): void => {
    if (response.status !== d.expectStatus) {
      fail(`HTTP ${response.status}`);
      return;
    }
    if (!measuring) return;
    const value = d.expectHeader === null ? undefined : response.headers[d.expectHeader.name.toLowerCase()];
    if (d.expectHeader !== null && value !== d.expectHeader.value) {
      const key = String(value);
      mismatched[key] = (mismatched[key] ?? 0) + 1;
      return;
    }
    completed += 1;
    record((performance.now() - t0) * 1000);
  };
  const caller = async (): Promise<void> => {
    while (running) {
      const t0 = performance.now();
      try {
        check(await pool.request(request), t0);
      } catch (error) {
        fail((error as Error).message);
        await new Promise((resolve) => setTimeout(resolve, ERROR_PAUSE_MS));
      }
    }
  };

  const callers = Array.from({ length: d.connections }, caller);
  await new Promise((resolve) => setTimeout(resolve, d.warmupMs));
  measuring = true;
  const start = performance.now();
  await new Promise((resolve) => setTimeout(resolve, d.measureMs));
  measuring = false;
  const windowMs = performance.now() - start;
  running = false;
  await Promise.all(callers);
  pool.close();
  return { completed, errors, mismatched, firstError, windowMs, latenciesUs: latencies.slice(0, n) };
}

const port = parentPort;
if (port === null) throw new Error('http-flood-worker runs only as a worker thread');
const data = workerData as FloodWorkerData;
// Encoded before `ready`, so a bad header fails the flood before any load starts.
const request = encodeRawRequest(data.method, data.path, hostHeader(data.host, data.port), data.headers, data.body ?? undefined);
const started = new Promise((resolve) => port.once('message', resolve));
port.postMessage({ type: 'ready' } satisfies FloodWorkerMessage);
await started;
const report = await flood(data, request);
port.postMessage({ type: 'report', report } satisfies FloodWorkerMessage, [report.latenciesUs.buffer as ArrayBuffer]);
