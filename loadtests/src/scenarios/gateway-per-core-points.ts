/**
 * One measured point of `npm run bench -- gateway --per-core`: a load from core 1 against a server on
 * core 0, with the server's CPU per request read from /proc (every thread; nginx's worker too).
 *
 * - floodPoint: closed loop, 32 keep-alive connections, wrk (one thread) when installed, else the
 *   project's http-flood (one worker thread): requests/s and CPU per request at saturation.
 * - ratePoint: open loop at a fixed rate (the same for every server compared): CPU per request.
 * - soloPoint: one caller, one request at a time (concurrency 1): p50/p99 latency.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { arrivalGaps } from '../lib/load/arrival-gaps.js';
import { startClosedLoad } from '../lib/load/closed-loop.js';
import { sleep, type LoadWindow, type RunningLoad } from '../lib/load/load-window.js';
import { startOpenLoad } from '../lib/load/open-loop.js';
import { runHttpFlood } from '../lib/clients/http-flood.js';
import { summarizeLatencies, type LatencySummary } from '../lib/sampling/percentiles.js';
import { readThreadCpu, threadCpuDelta, type ThreadCpu } from '../lib/per-core/index.js';
import type { MeasuredServer } from './gateway-per-core-stack.js';

export interface PointTiming {
  readonly warmupS: number;
  readonly durationS: number;
}

export interface PointCpu {
  /** CPU of the server (all its threads and processes) per request, µs. */
  readonly cpuUsPerRequest: number;
  /** Of which the main thread (the event loop; nginx: its worker), µs. */
  readonly mainThreadUsPerRequest: number;
  /** Share of one core the server used in the window. */
  readonly coreShare: number;
}

export interface MeasuredPoint extends PointCpu {
  readonly label: string;
  readonly requests: number;
  readonly errors: number;
  /** Open loop: intended sends skipped because 256 were outstanding (the rate was not delivered). */
  readonly dropped: number;
  readonly requestsPerSec: number;
  /** Requests per second per fully used core: 1e6 / CPU µs per request. */
  readonly requestsPerCoreSec: number;
  readonly latency?: LatencySummary;
  readonly firstError?: string;
  /** CPU per request less what the server spends idle (its timers, load reports), µs; gateway points only. */
  readonly netCpuUsPerRequest?: number;
  /** CPU per request of the `upstream` server a point was given (the node behind the gateway), µs. */
  readonly upstreamCpuUsPerRequest?: number;
}

/** Share of one core `server` uses with no load at all, over `seconds`. */
export async function idleShare(server: MeasuredServer, seconds: number): Promise<number> {
  const before = await snapshot(server);
  const t0 = performance.now();
  await sleep(seconds * 1000);
  const after = await snapshot(server);
  return cpuBetween(before, after, 1, (performance.now() - t0) / 1000).coreShare;
}

/** `point` with its CPU per request net of the server's idle share of a core. */
export function lessIdle(point: MeasuredPoint, idle: number): MeasuredPoint {
  const net = point.requestsPerSec > 0 ? ((point.coreShare - idle) * 1e6) / point.requestsPerSec : Number.NaN;
  return { ...point, netCpuUsPerRequest: net };
}

type Snapshot = { pid: number; threads: ThreadCpu[] }[];

async function snapshot(server: MeasuredServer): Promise<Snapshot> {
  const pids = await server.pids();
  return Promise.all(pids.map(async (pid) => ({ pid, threads: await readThreadCpu(pid) })));
}

function cpuBetween(before: Snapshot, after: Snapshot, requests: number, windowS: number): PointCpu {
  let total = 0;
  let main = 0;
  for (const a of after) {
    const b = before.find((s) => s.pid === a.pid)?.threads ?? [];
    const split = threadCpuDelta(b, a.threads, a.pid);
    total += split.totalUs;
    // nginx: the worker (the last pid) is where requests are served.
    if (after.length === 1 || a !== after[0]) main += split.eventLoopUs;
  }
  return {
    cpuUsPerRequest: requests > 0 ? total / requests : Number.NaN,
    mainThreadUsPerRequest: requests > 0 ? main / requests : Number.NaN,
    coreShare: total / 1e6 / windowS,
  };
}

export interface FloodRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array;
}

const FLOOD_CONNECTIONS = 32;

async function wrkRun(work: string, port: number, request: FloodRequest, seconds: number): Promise<{ requests: number; errors: number; firstError?: string }> {
  const bodyPath = join(work, 'wrk-body.bin');
  await writeFile(bodyPath, request.body);
  const headers = Object.entries(request.headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join('\n');
  const scriptPath = join(work, 'wrk.lua');
  await writeFile(scriptPath, `local f = io.open(${JSON.stringify(bodyPath)}, "rb")\nwrk.body = f:read("*a")\nf:close()\nwrk.method = ${JSON.stringify(request.method)}\n${headers}\n`);
  const child = spawn('wrk', ['-t1', `-c${FLOOD_CONNECTIONS}`, `-d${seconds}s`, '-s', scriptPath, `http://127.0.0.1:${port}${request.path}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => void (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket === null ? 0 : socket.slice(1).reduce((n, s) => n + Number(s), 0);
  const errors = non2xx + socketErrors + (code === 0 && Number.isFinite(requests) ? 0 : 1);
  return { requests, errors, ...(errors > 0 ? { firstError: out.trim().split('\n').slice(-3).join(' | ') } : {}) };
}

/** Saturating closed loop against `server`; `useWrk` false falls back to the project's http-flood. */
export async function floodPoint(label: string, work: string, server: MeasuredServer, request: FloodRequest, timing: PointTiming, useWrk: boolean): Promise<MeasuredPoint> {
  let requests: number;
  let errors: number;
  let firstError: string | undefined;
  let windowS: number;
  let before: Snapshot;
  let after: Snapshot;
  if (useWrk) {
    await wrkRun(work, server.port, request, Math.max(1, Math.round(timing.warmupS)));
    before = await snapshot(server);
    const t0 = performance.now();
    ({ requests, errors, firstError } = await wrkRun(work, server.port, request, Math.max(1, Math.round(timing.durationS))));
    windowS = (performance.now() - t0) / 1000;
    after = await snapshot(server);
  } else {
    let b: Snapshot = [];
    let a: Snapshot = [];
    const cpu = (async () => {
      await sleep(timing.warmupS * 1000);
      b = await snapshot(server);
      await sleep(timing.durationS * 1000);
      a = await snapshot(server);
    })();
    const result = await runHttpFlood({
      host: '127.0.0.1',
      port: server.port,
      method: request.method,
      path: request.path,
      headers: request.headers,
      body: request.body,
      threads: 1,
      connections: FLOOD_CONNECTIONS,
      warmupMs: timing.warmupS * 1000,
      measureMs: timing.durationS * 1000,
    });
    await cpu;
    before = b;
    after = a;
    requests = result.completed;
    errors = result.errors;
    firstError = result.firstError;
    windowS = result.windowS;
  }
  const cpu = cpuBetween(before, after, requests, windowS);
  return {
    label,
    requests,
    errors,
    dropped: 0,
    requestsPerSec: requests / windowS,
    requestsPerCoreSec: 1e6 / cpu.cpuUsPerRequest,
    ...cpu,
    ...(firstError !== undefined ? { firstError } : {}),
  };
}

async function windowPoint(label: string, load: RunningLoad, server: MeasuredServer | undefined, timing: PointTiming, upstream?: MeasuredServer): Promise<MeasuredPoint> {
  let before: Snapshot = [];
  let after: Snapshot = [];
  let upBefore: Snapshot = [];
  let upAfter: Snapshot = [];
  let window: LoadWindow;
  try {
    await sleep(timing.warmupS * 1000);
    window = await load.measure(timing.durationS * 1000, {
      onWindowStart: async () => {
        before = server === undefined ? [] : await snapshot(server);
        upBefore = upstream === undefined ? [] : await snapshot(upstream);
      },
      onWindowEnd: async () => {
        after = server === undefined ? [] : await snapshot(server);
        upAfter = upstream === undefined ? [] : await snapshot(upstream);
      },
    });
  } finally {
    await load.stop();
  }
  const requests = window.latenciesUs.length + window.errors;
  const cpu = server === undefined ? { cpuUsPerRequest: Number.NaN, mainThreadUsPerRequest: Number.NaN, coreShare: Number.NaN } : cpuBetween(before, after, requests, window.windowS);
  const firstError = load.firstError();
  return {
    label,
    requests,
    errors: window.errors,
    dropped: window.dropped,
    requestsPerSec: window.latenciesUs.length / window.windowS,
    requestsPerCoreSec: 1e6 / cpu.cpuUsPerRequest,
    ...cpu,
    ...(upstream === undefined ? {} : { upstreamCpuUsPerRequest: cpuBetween(upBefore, upAfter, requests, window.windowS).cpuUsPerRequest }),
    latency: summarizeLatencies(window.latenciesUs),
    ...(window.errors > 0 && firstError !== undefined ? { firstError } : {}),
  };
}

/** Open loop at `ratePerSec` (constant gaps). */
export function ratePoint(label: string, call: () => Promise<unknown>, ratePerSec: number, server: MeasuredServer | undefined, timing: PointTiming, upstream?: MeasuredServer): Promise<MeasuredPoint> {
  const load = startOpenLoad({ nextGapMs: arrivalGaps('constant', ratePerSec), maxOutstanding: 256, call: async () => void (await call()) });
  return windowPoint(label, load, server, timing, upstream);
}

/** One request at a time. */
export function soloPoint(label: string, call: () => Promise<unknown>, server: MeasuredServer | undefined, timing: PointTiming, upstream?: MeasuredServer): Promise<MeasuredPoint> {
  return closedPoint(label, call, 1, server, timing, upstream);
}

/** Closed loop: `concurrency` callers, each sending its next request when the last is answered. */
export function closedPoint(label: string, call: () => Promise<unknown>, concurrency: number, server: MeasuredServer | undefined, timing: PointTiming, upstream?: MeasuredServer): Promise<MeasuredPoint> {
  const load = startClosedLoad({ concurrency, call: async () => void (await call()) });
  return windowPoint(label, load, server, timing, upstream);
}
