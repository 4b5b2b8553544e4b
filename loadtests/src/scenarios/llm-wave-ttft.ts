/**
 * Where a TTFT probe's time goes through the node under waves (issue 21): tiny_decoder (or LLM_WAVE_MODEL=
 * bench_decoder) served per core (node on core 0, this process on core 1), short probes (8 tokens) one after
 * another: idle, beside 31 closed-loop generations of 256 tokens that restart together (waves of 31 arrivals),
 * and beside the same generations staggered. The node runs with TESSERA_LLM_TRACE_LOG, so each probe's client
 * times (epoch ms) match the engine's first-token trace of it, and its TTFT splits into: to the engine (client
 * send, the node's HTTP handling on its main thread, up to the post to the engine thread), the engine (message
 * delivery, the run in flight, runs queued ahead, its own prefill) and delivery (the first token's post, the
 * main thread's SSE write, the client's read). Probes that landed within 40 ms after a wave's first arrival
 * are reported apart (LLM_WAVE_NEAR_MS, default 60; LLM_WAVE_BACKGROUND_TOKENS, default 256). Each window's summary
 * has the slowest 1% of its probes (what sets a p99) whole, and how many of them had each part as their largest.
 *
 *   node --import tsx loadtests/src/scenarios/llm-wave-ttft.ts [WINDOW_S] [OUT.json]
 *
 * TESSERA_BUNDLE_DIR picks the node's build as for the other benches; LLM_PARAMS='{"key":"value"}' overrides
 * config.pbtxt parameters of the model (A/Bs). LLM_WAVE_SCHED_DIR=DIR (root, perf installed): each window's
 * middle LLM_WAVE_SCHED_S seconds (default 3) under `perf record` of the scheduler's switches and wake-ups
 * (CLOCK_MONOTONIC), and each probe's times on that clock with the node's and this process's pids in
 * DIR/<window>.probes.json, for llm-wave-sched.py to join the slow probes' delivery with the threads' timelines.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { benchDecoderFiles } from '../../../gpu-node/src/example-models/bench-decoder.js';
import { tinyDecoderFiles } from '../../../gpu-node/src/example-models/tiny-decoder.js';
import type { FirstTokenTrace } from '../../../gpu-node/src/backends/onnxruntime-llm/trace-ring.js';
import { perCoreSupport, pinProcess } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady } from '../lib/processes/node-process.js';
import { closedLoop, MIN_TOKENS, probes, type StreamRecord } from './llm-stream-client.js';

const WINDOW_S = Number(process.argv[2] ?? 8);
/** LLM_WAVE_IDLE_WINDOW_S: the idle windows' length (default WINDOW_S; idle probes come ~4x faster on bench_decoder). */
const IDLE_WINDOW_S = Number(process.env['LLM_WAVE_IDLE_WINDOW_S'] ?? WINDOW_S);
const OUT = process.argv[3];
const MODEL = process.env['LLM_WAVE_MODEL'] ?? 'tiny_decoder';
/** A probe sent within this long after a background request's arrival counts as landing in a wave. */
const WAVE_NEAR_MS = Number(process.env['LLM_WAVE_NEAR_MS'] ?? 60);
/** The background generations' length (256 as in llm-batching; shorter gives more waves per window on a slow box). */
const BACKGROUND_TOKENS = Number(process.env['LLM_WAVE_BACKGROUND_TOKENS'] ?? 256);
const SCHED_DIR = process.env['LLM_WAVE_SCHED_DIR'];
const SCHED_S = Number(process.env['LLM_WAVE_SCHED_S'] ?? 3);

/** Epoch ms minus CLOCK_MONOTONIC ms (process.hrtime's clock, perf's with -k CLOCK_MONOTONIC), taken once. */
function epochMinusMonotonicMs(): number {
  return performance.timeOrigin + performance.now() - Number(process.hrtime.bigint()) / 1e6;
}

/** `perf record` of the scheduler's events on every CPU for `seconds`, from now; resolves when perf has exited. */
function recordSched(out: string, seconds: number): Promise<void> {
  const events = ['sched:sched_switch', 'sched:sched_wakeup', 'sched:sched_waking', 'sched:sched_migrate_task'].flatMap((e) => ['-e', e]);
  const perf = spawn('perf', ['record', '-a', '-k', 'CLOCK_MONOTONIC', ...events, '-o', out, '--', 'sleep', String(seconds)], { stdio: 'ignore' });
  return new Promise((resolve) => perf.once('exit', () => resolve()));
}

interface Split {
  ttftMs: number;
  toEngineMs: number;
  engineMs: number;
  deliveryMs: number;
  inFlightMs: number;
  queuedMs: number;
  prefillMs: number;
  queuedRuns: number;
  /** The engine thread's CPU ms in the run in flight (its remaining wall time × the run's CPU share) and in its own prefill (TESSERA_LLM_TRACE_CPU=1). */
  inFlightCpuMs: number;
  prefillCpuMs: number;
  /** The in-flight run was a prefill or chunk (a wave's) rather than a decode run. */
  prefillInFlight: number;
  inWave: boolean;
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number);
}

/** The part of a probe's TTFT that was largest: to the engine, the run in flight, runs queued ahead, its prefill, the engine's rest (message, sampling), delivery. */
function largestPart(s: Split): string {
  const parts: [string, number][] = [
    ['toEngine', s.toEngineMs],
    ['inFlight', s.inFlightMs],
    ['queued', s.queuedMs],
    ['prefill', s.prefillMs],
    ['engineOther', s.engineMs - s.inFlightMs - s.queuedMs - s.prefillMs],
    ['delivery', s.deliveryMs],
  ];
  return parts.reduce((a, b) => (b[1] > a[1] ? b : a))[0];
}

function summary(splits: Split[]): object {
  const keys = ['ttftMs', 'toEngineMs', 'engineMs', 'deliveryMs', 'inFlightMs', 'queuedMs', 'prefillMs', 'queuedRuns', 'inFlightCpuMs', 'prefillCpuMs', 'prefillInFlight'] as const;
  const mean = (k: (typeof keys)[number], of: Split[]) => Math.round((of.reduce((s, x) => s + x[k], 0) / Math.max(1, of.length)) * 100) / 100;
  const bySlowest = [...splits].sort((a, b) => b.ttftMs - a.ttftMs);
  const slowest = bySlowest.slice(0, Math.max(1, Math.ceil(splits.length / 20)));
  // The slowest 1% (what sets a p99), each probe's split kept whole, and how many had each part as their largest.
  const hundredth = bySlowest.slice(0, Math.max(1, Math.ceil(splits.length / 100)));
  const round2 = (v: number) => Math.round(v * 100) / 100;
  return {
    probes: splits.length,
    ttftP50: pct(splits.map((s) => s.ttftMs), 0.5),
    ttftP99: pct(splits.map((s) => s.ttftMs), 0.99),
    meanMs: Object.fromEntries(keys.map((k) => [k, mean(k, splits)])),
    slowestTwentiethMeanMs: Object.fromEntries(keys.map((k) => [k, mean(k, slowest)])),
    slowestInWave: slowest.filter((s) => s.inWave).length,
    slowestHundredthMeanMs: Object.fromEntries(keys.map((k) => [k, mean(k, hundredth)])),
    slowestHundredthLargestPart: hundredth.reduce<Record<string, number>>((counts, s) => ({ ...counts, [largestPart(s)]: (counts[largestPart(s)] ?? 0) + 1 }), {}),
    slowestHundredth: hundredth.map((s) => Object.fromEntries(Object.entries(s).map(([k, v]) => [k, typeof v === 'number' ? round2(v) : v]))),
  };
}

function splitsOf(records: StreamRecord[], traces: FirstTokenTrace[], fromMs: number): Split[] {
  const origin = performance.timeOrigin;
  const background = traces.filter((t) => t.maxTokens !== MIN_TOKENS).map((t) => t.sentAtMs).sort((a, b) => a - b);
  const out: Split[] = [];
  for (const r of records) {
    if (!r.ok || r.startMs < fromMs) continue;
    const start = origin + r.startMs;
    const first = origin + r.firstMs;
    const trace = traces.find((t) => t.maxTokens === MIN_TOKENS && t.sentAtMs >= start - 1 && t.sentAtMs <= first);
    if (trace === undefined) continue;
    const inWave = background.some((b) => b <= trace.sentAtMs && b >= trace.sentAtMs - WAVE_NEAR_MS);
    out.push({
      ttftMs: r.firstMs - r.startMs,
      toEngineMs: trace.sentAtMs - start,
      engineMs: trace.firstTokenAtMs - trace.sentAtMs,
      deliveryMs: first - trace.firstTokenAtMs,
      inFlightMs: trace.inFlightMs,
      queuedMs: trace.queuedMs,
      prefillMs: trace.prefillMs,
      queuedRuns: trace.queuedRuns.decode + trace.queuedRuns.prefill + trace.queuedRuns.chunk,
      inFlightCpuMs: trace.inFlight === 'none' ? 0 : trace.inFlightMs * (Number.isFinite(trace.inFlightCpuShare) ? trace.inFlightCpuShare : Number.NaN),
      prefillCpuMs: trace.prefillCpuMs,
      prefillInFlight: trace.inFlight === 'prefill' || trace.inFlight === 'chunk' ? 1 : 0,
      inWave,
    });
  }
  return out;
}

/** Each probe's send, engine arrival, first token (engine) and first read (client), CLOCK_MONOTONIC ms, for llm-wave-sched.py. */
function probeTimes(records: StreamRecord[], traces: FirstTokenTrace[], fromMs: number, nodePid: number): object {
  const offset = epochMinusMonotonicMs();
  const origin = performance.timeOrigin;
  const probesOut: object[] = [];
  for (const r of records) {
    if (!r.ok || r.startMs < fromMs) continue;
    const trace = traces.find((t) => t.maxTokens === MIN_TOKENS && t.sentAtMs >= origin + r.startMs - 1 && t.sentAtMs <= origin + r.firstMs);
    if (trace === undefined) continue;
    const mono = (epochMs: number) => epochMs - offset;
    probesOut.push({ startMs: mono(origin + r.startMs), sentMs: mono(trace.sentAtMs), firstTokenMs: mono(trace.firstTokenAtMs), readMs: mono(origin + r.firstMs), prefillRows: trace.prefillRows, inFlight: trace.inFlight });
  }
  return { nodePid, clientPid: process.pid, probes: probesOut };
}

async function main(): Promise<void> {
  const perCore = perCoreSupport();
  if (perCore.ok) pinProcess(process.pid, 1);
  const repo = await mkdtemp(join(tmpdir(), 'tessera-wave-ttft-'));
  const log = join(repo, 'traces.jsonl');
  process.env['TESSERA_LLM_TRACE_LOG'] = log;
  process.env['TESSERA_LLM_TRACE_CPU'] = '1';
  const overrides = JSON.parse(process.env['LLM_PARAMS'] ?? '{}') as Record<string, string>;
  const files = MODEL === 'bench_decoder' ? benchDecoderFiles : tinyDecoderFiles;
  for (const file of files({ name: MODEL, maxNumSeqs: 32, kvCacheBytes: 128 * 1024 * 1024, parameters: overrides })) {
    const path = join(repo, MODEL, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.contents);
  }
  const node = await launchNode({ modelRepository: repo });
  const result: Record<string, object> = {};
  try {
    if (perCore.ok) pinProcess(node.pid, 0);
    await waitForModelReady(node.httpBase, MODEL);
    const windows: [string, boolean | undefined][] = [['idle', undefined], ['waves', false], ['staggered', true], ['idle2', undefined]];
    const splits: Record<string, Split[]> = {};
    for (const [name, staggered] of windows) {
      const warmS = 2;
      const windowS = staggered === undefined ? IDLE_WINDOW_S : WINDOW_S;
      const until = performance.now() + (warmS + windowS) * 1000;
      const fromMs = until - windowS * 1000;
      const probing = (async () => {
        if (staggered !== undefined) await new Promise((r) => setTimeout(r, 200));
        return probes(node.httpBase, MODEL, until, 8);
      })();
      // The recording covers the window's middle, away from its start and end.
      const recording = SCHED_DIR === undefined ? Promise.resolve() : new Promise<void>((r) => setTimeout(r, (warmS + Math.max(0, (windowS - SCHED_S) / 2)) * 1000)).then(() => recordSched(join(SCHED_DIR, `${name}.data`), SCHED_S));
      const [records] = await Promise.all([probing, staggered === undefined ? Promise.resolve([]) : closedLoop(node.httpBase, MODEL, 31, until, 99, BACKGROUND_TOKENS, staggered, true)]);
      await new Promise((r) => setTimeout(r, 1500));
      const traces = (await readFile(log, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as FirstTokenTrace);
      splits[name] = splitsOf(records, traces, fromMs);
      await recording;
      if (SCHED_DIR !== undefined) await writeFile(join(SCHED_DIR, `${name}.probes.json`), JSON.stringify(probeTimes(records, traces, fromMs, node.pid)));
      const all = splits[name] ?? [];
      result[name] = { all: summary(all), ...(staggered === false ? { inWave: summary(all.filter((s) => s.inWave)), outOfWave: summary(all.filter((s) => !s.inWave)) } : {}) };
      process.stderr.write(`${name}: ${JSON.stringify(result[name])}\n`);
    }
    const idleP99 = Math.max(...['idle', 'idle2'].map((n) => pct((splits[n] ?? []).map((s) => s.ttftMs), 0.99)));
    const idleP99Mean = ['idle', 'idle2'].map((n) => pct((splits[n] ?? []).map((s) => s.ttftMs), 0.99)).reduce((a, b) => a + b, 0) / 2;
    result['ratios'] = {
      wavesVsIdleP99: pct((splits['waves'] ?? []).map((s) => s.ttftMs), 0.99) / idleP99Mean,
      staggeredVsIdleP99: pct((splits['staggered'] ?? []).map((s) => s.ttftMs), 0.99) / idleP99Mean,
      idleP99Max: idleP99,
    };
  } finally {
    await node.stop();
    await rm(repo, { recursive: true, force: true });
  }
  const text = JSON.stringify({ model: MODEL, windowS: WINDOW_S, params: process.env['LLM_PARAMS'] ?? '{}', bundle: process.env['TESSERA_BUNDLE_DIR'] ?? 'sources', ...result }, null, 1);
  if (OUT !== undefined) await writeFile(OUT, `${text}\n`);
  process.stdout.write(`${text}\n`);
}

await main();
process.exit(0);
