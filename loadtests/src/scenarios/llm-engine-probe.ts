/**
 * Child process of the llm-batching bench, run pinned to core 0 (`node --import tsx llm-engine-probe.ts
 * <mode> <model dir>`); prints one JSON line.
 * - `anchor`: the bare onnxruntime figure: one sequence decoded greedily with an exact-size cache, no
 *   engine, no node (one intra-op thread): tokens/s.
 * - `copy`: the engine itself (no HTTP) running 32 streams of 8..256 tokens: what its steps copy and how
 *   long that takes beside the model's own time (`COPY_PROMPTS=bench`: with the llm-batching bench's prompts),
 *   and how much of what its runs fed was padding. `COPY_REQUESTS` (default 4) requests per stream;
 *   `COPY_MODE=static`: instead, as many whole-request batches of 32 sent together, every row kept to its
 *   batch's longest (the bench's static baseline), tokens counted up to each row's own length.
 * - `prefill`: bare onnxruntime (one thread): CPU per prefill run of B prompts of L tokens (best of 5
 *   rounds of 3), i.e. what batching prompts into one run saves per prompt.
 * - `ttft`: the engine itself (no HTTP, no main-thread work of other streams): time to first token of
 *   short probes sent one after another, alone and then beside 31 closed-loop generations of 256 tokens
 *   (which end and restart together, in waves of 31 arrivals), p50/p99 of each; and where each busy probe's
 *   TTFT went (`busyBreakdown`, from the engine's first-token traces: the run in flight and its kind,
 *   message delivery, queued runs, its own prefill, delivery of the first token to the caller).
 * `LLM_PARAMS='{"decode_run_rows":"16"}'` overrides config.pbtxt parameters of the model (A/Bs in turns; `copy` too).
 * - `positions`: bare onnxruntime's CPU per decode row against the cached length (positionCost below).
 * - `runs`: bare onnxruntime's CPU per decode run over rows 1..32 at cached lengths 32..256, and the plane fitted
 *   through them (per run, per row, per row and cached position): what one more run per step costs against padding.
 * - `wave`: the case a prefill order decides, isolated: rounds of 31 requests of 64 tokens arriving together
 *   with a short probe (8 tokens) right behind them; the probe's TTFT and the wave's own, against the probe
 *   alone on the idle engine. Run it on a model with `prefill_order` arrival and one with shortest_first.
 */
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { create } from '@bufbuild/protobuf';
import { parseModelConfigText } from '../../../shared/src/model-config/parse-text.js';
import { ModelParameterSchema } from '../../../shared/src/gen/model_config_pb.js';
import { encodeBytesElements } from '../../../shared/src/tensors/index.js';
import { LlmInstance } from '../../../gpu-node/src/backends/onnxruntime-llm/index.js';
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';
import { readFile } from 'node:fs/promises';
import { readThreadCpu, type ThreadCpu } from '../lib/per-core/index.js';
import { MIN_TOKENS, promptFor } from './llm-stream-client.js';
import { breakdownOf, type ProbeTiming } from './llm-ttft-breakdown.js';

/** CPU seconds of the busiest thread between two readings: the engine thread, here. */
function busiestThreadCpuS(before: readonly ThreadCpu[], after: readonly ThreadCpu[]): number {
  const start = new Map(before.map((t) => [t.tid, t.cpuSeconds]));
  return Math.max(...after.map((t) => t.cpuSeconds - (start.get(t.tid) ?? 0)));
}

const [mode, modelDir] = process.argv.slice(2) as [string, string];

async function anchor(): Promise<object> {
  const session = await ort.InferenceSession.create(join(modelDir, '1', 'model.onnx'), { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const pasts = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = session.inputMetadata.find((m) => m.name === pasts[0]);
  const [, heads, , headDim] = meta?.isTensor === true ? (meta.shape as number[]) : [];
  const int64 = (values: number[], dims: number[]) => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), dims);
  const generate = async (promptIds: number[], tokens: number): Promise<void> => {
    const feeds: Record<string, ort.Tensor> = {
      input_ids: int64(promptIds, [1, promptIds.length]),
      position_ids: int64(promptIds.map((_, i) => i), [1, promptIds.length]),
      attention_mask: int64(promptIds.map(() => 1), [1, promptIds.length]),
    };
    for (const name of pasts) feeds[name] = new ort.Tensor('float32', new Float32Array(0), [1, heads as number, 0, headDim as number]);
    let length = promptIds.length;
    for (let t = 0; t < tokens; t++) {
      const result = await session.run(feeds);
      const logits = result['logits']!.data as Float32Array;
      const vocab = result['logits']!.dims[2] as number;
      const offset = logits.length - vocab;
      let best = 0;
      for (let i = 1; i < vocab; i++) if ((logits[offset + i] as number) > (logits[offset + best] as number)) best = i;
      feeds['input_ids'] = int64([best], [1, 1]);
      feeds['position_ids'] = int64([length], [1, 1]);
      length += 1;
      feeds['attention_mask'] = int64(new Array<number>(length).fill(1), [1, length]);
      for (const name of pasts) feeds[name] = result[name.replace('past_key_values', 'present')] as ort.Tensor;
    }
  };
  const prompt = Array.from(Buffer.from('an anchor prompt'));
  await generate(prompt, 32);
  const random = mulberry32(5);
  let tokens = 0;
  const start = performance.now();
  while (performance.now() - start < 4000) {
    const length = 8 + Math.floor(random() * 249);
    await generate(prompt, length);
    tokens += length;
  }
  return { tokensPerSecond: tokens / ((performance.now() - start) / 1000) };
}

async function copy(): Promise<object> {
  const instance = await startInstance();
  const random = mulberry32(11);
  // COPY_PROMPTS=bench: the llm-batching bench's prompts (3-10 words, ~20-75 byte tokens), which reach the group cap; the fixed short ones do not.
  const benchPrompts = process.env['COPY_PROMPTS'] === 'bench';
  const requests = Number(process.env['COPY_REQUESTS'] ?? 4);
  const staticBatches = process.env['COPY_MODE'] === 'static';
  let tokens = 0;
  const cpuBefore = process.cpuUsage();
  const threadsBefore = await readThreadCpu(process.pid);
  const startMs = performance.now();
  const text = (s: string) => ({ name: 'text_input', datatype: 'BYTES' as const, shape: [1], data: encodeBytesElements([s]) });
  const send = (prompt: string, maxTokens: number) =>
    instance.execute([
      {
        inputs: [text(prompt), { name: 'sampling_parameters', datatype: 'BYTES', shape: [1], data: encodeBytesElements([JSON.stringify({ max_tokens: maxTokens, ignore_eos: true })]) }],
        requestedOutputs: [],
        parameters: {},
        onResponse: () => {},
      },
    ]);
  // COPY_STEADY_S: streams restart until then, and the engine is read over [5 s, then] only (32 rows, no drain).
  const steadyS = Number(process.env['COPY_STEADY_S'] ?? 0);
  const stopMs = startMs + steadyS * 1000;
  const snapshot = async () => ({ threads: await readThreadCpu(process.pid), stats: await instance.engineStats() });
  const steady = steadyS > 0 && !staticBatches ? (async () => {
    await new Promise((r) => setTimeout(r, 5000));
    const from = await snapshot();
    await new Promise((r) => setTimeout(r, stopMs - performance.now()));
    return { from, to: await snapshot() };
  })() : undefined;
  const client = async (): Promise<void> => {
    for (let i = 0; steadyS > 0 ? performance.now() < stopMs : i < requests; i++) {
      const maxTokens = 8 + Math.floor(random() * 249);
      tokens += maxTokens;
      await send(benchPrompts ? promptFor(random) : `client prompt ${i}`, maxTokens);
    }
  };
  const batch = async (): Promise<void> => {
    const rows = Array.from({ length: 32 }, (_, i) => ({ prompt: benchPrompts ? promptFor(random) : `client prompt ${i}`, length: 8 + Math.floor(random() * 249) }));
    const longest = Math.max(...rows.map((r) => r.length));
    for (const r of rows) tokens += r.length;
    await Promise.all(rows.map((r) => send(r.prompt, longest)));
  };
  if (staticBatches) for (let b = 0; b < requests; b++) await batch();
  else await Promise.all(Array.from({ length: 32 }, client));
  const wallS = (performance.now() - startMs) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const window = await steady;
  const windowed = window === undefined ? {} : steadyFigures(window.from, window.to);
  const engineCpuS = busiestThreadCpuS(threadsBefore, await readThreadCpu(process.pid));
  const stats = await instance.engineStats();
  await instance.close();
  const floats = stats.copies;
  return {
    ...windowed,
    tokens,
    tokensPerSecond: tokens / wallS,
    // The probe's whole CPU (engine thread included) per token: steadier than tokens/s on a shared core.
    tokensPerCpuSecond: tokens / ((cpu.user + cpu.system) / 1e6),
    // The engine thread alone (model runs, copies, sampling, detokenizing, posting events).
    engineThreadCpuUsPerToken: (engineCpuS * 1e6) / tokens,
    runsPerStep: stats.stepRuns / stats.steps,
    // Messages the engine thread posted to the main thread (each a batch of events), per step and per token.
    eventMessagesPerStep: stats.eventMessages / stats.steps,
    eventsPerMessage: stats.events / stats.eventMessages,
    // What a newcomer waits for before its prefill starts (the run in flight), and the prefill itself.
    meanAdmissionWaitMs: stats.admissionWaitNs / stats.prefills / 1e6,
    meanPrefillMs: stats.prefillNs / stats.prefills / 1e6,
    // Arrival to first token inside the engine (a batched group's members all wait for its whole run).
    meanFirstTokenMs: stats.firstTokenNs / stats.prefills / 1e6,
    // Batched prefill: requests per prefill run, and the share of its tokens that were padding.
    meanRequestsPerPrefillRun: stats.prefills / stats.prefillRuns,
    prefillRunsPerRequest: stats.prefillRuns / stats.prefills,
    meanPaddedTokensPerPrefillRun: stats.prefillPaddedTokens / stats.prefillRuns,
    prefillPaddingShare: 1 - stats.prefillTokens / stats.prefillPaddedTokens,
    bucketMoves: stats.bucketMoves,
    steps: stats.steps,
    meanSequencesPerStep: stats.stepSequences / stats.steps,
    // Of the cached positions decode runs fed, the share that was padding (rows × run capacity against own lengths).
    decodePaddingShare: 1 - stats.stepCachedPositions / stats.stepPaddedPositions,
    paddedPositionsPerRow: stats.stepPaddedPositions / stats.stepSequences,
    cachedPositionsPerRow: stats.stepCachedPositions / stats.stepSequences,
    stepModelUsPerRow: stats.stepModelNs / stats.stepSequences / 1000,
    prefillWallS: stats.prefillNs / 1e9,
    engineCpuS,
    stepCopyUsPerStep: stats.stepCopyNs / stats.steps / 1000,
    stepModelUsPerStep: stats.stepModelNs / stats.steps / 1000,
    copyShareOfStep: stats.stepCopyNs / (stats.stepCopyNs + stats.stepModelNs),
    // What a decode run fetches out of onnxruntime (each a fresh copy in onnxruntime-node): logits and presents, full or last position.
    fetchedBytesPerDecodeRun: stats.stepFetchedBytes / stats.stepRuns,
    bytesPerStep: {
      newTokens: (floats.stepFloats * 4) / stats.steps,
      prefill: (floats.prefillFloats * 4) / stats.steps,
      compaction: (floats.compactFloats * 4) / stats.steps,
      growth: (floats.growFloats * 4) / stats.steps,
      bucketMoves: (floats.bucketFloats * 4) / stats.steps,
    },
  };
}

type Snapshot = { threads: ThreadCpu[]; stats: Awaited<ReturnType<LlmInstance['engineStats']>> };

/** The engine between two snapshots: thread CPU per token (each row of a run and each prefill is a token), rows per step, padding. */
function steadyFigures(from: Snapshot, to: Snapshot): object {
  const delta = (key: 'steps' | 'stepSequences' | 'prefills' | 'stepRuns' | 'stepPaddedPositions' | 'stepCachedPositions' | 'bucketMoves') => to.stats[key] - from.stats[key];
  const tokens = delta('stepSequences') + delta('prefills');
  return {
    steadyTokens: tokens,
    steadyEngineThreadCpuUsPerToken: (busiestThreadCpuS(from.threads, to.threads) * 1e6) / tokens,
    steadySequencesPerStep: delta('stepSequences') / delta('steps'),
    steadyRunsPerStep: delta('stepRuns') / delta('steps'),
    steadyPaddingShare: 1 - delta('stepCachedPositions') / delta('stepPaddedPositions'),
    steadyPaddedPositionsPerRow: delta('stepPaddedPositions') / delta('stepSequences'),
    steadyCachedPositionsPerRow: delta('stepCachedPositions') / delta('stepSequences'),
    steadyMovesPerStep: delta('bucketMoves') / delta('steps'),
  };
}

async function startInstance(): Promise<LlmInstance> {
  const parsed = parseModelConfigText(await readFile(join(modelDir, 'config.pbtxt'), 'utf8'), 'config.pbtxt');
  const overrides = JSON.parse(process.env['LLM_PARAMS'] ?? '{}') as Record<string, string>;
  const parameters = { ...parsed.parameters };
  for (const [key, value] of Object.entries(overrides)) parameters[key] = create(ModelParameterSchema, { stringValue: value });
  const config = { ...parsed, parameters };
  const versionDir = join(modelDir, '1');
  return LlmInstance.start(
    { name: config.name, version: 1, modelDir, versionDir, modelPath: join(versionDir, 'model.onnx'), config },
    { name: `${config.name}_0`, groupName: config.name, kind: 'cpu', device: -1, auto: false },
  );
}

/**
 * One greedy request through the engine, streamed (without `stream` the backend answers once, at the end,
 * and the first response would time the whole generation); resolves with its time to first piece (ms) once it ended.
 */
async function timedRequest(instance: LlmInstance, prompt: string, maxTokens: number, timings?: ProbeTiming[]): Promise<number> {
  const text = (s: string) => ({ name: 'text_input', datatype: 'BYTES' as const, shape: [1], data: encodeBytesElements([s]) });
  const start = performance.now();
  const startAtMs = performance.timeOrigin + start;
  let first = Number.NaN;
  await instance.execute([
    {
      inputs: [
        text(prompt),
        { name: 'sampling_parameters', datatype: 'BYTES', shape: [1], data: encodeBytesElements([JSON.stringify({ max_tokens: maxTokens, ignore_eos: true })]) },
        { name: 'stream', datatype: 'BOOL', shape: [1], data: Uint8Array.of(1) },
      ],
      requestedOutputs: [],
      parameters: {},
      onResponse: () => {
        if (Number.isNaN(first)) first = performance.now();
      },
    },
  ]);
  timings?.push({ startAtMs, firstAtMs: performance.timeOrigin + first, ttftMs: first - start });
  return first - start;
}

function percentiles(values: number[]): { p50: number; p99: number; max: number; count: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] as number;
  return { p50: at(50), p99: at(99), max: sorted[sorted.length - 1] as number, count: sorted.length };
}

async function ttft(): Promise<object> {
  const instance = await startInstance();
  const random = mulberry32(23);
  const gapRandom = mulberry32(31);
  const gapMs = Number(process.env['TTFT_PROBE_GAP_MS'] ?? 0);
  const probeFor = async (ms: number, timings?: ProbeTiming[]): Promise<number[]> => {
    const times: number[] = [];
    const until = performance.now() + ms;
    while (performance.now() < until) {
      // TTFT_PROBE_GAP_MS: a drawn pause before each probe, so probes land at random points of the engine's
      // runs (one sent as the last one ends is in step with the engine's loop).
      if (gapMs > 0) await new Promise((r) => setTimeout(r, gapRandom() * gapMs));
      times.push(await timedRequest(instance, promptFor(random), MIN_TOKENS, timings));
    }
    return times;
  };
  await probeFor(500);
  const idleTimings: ProbeTiming[] = [];
  const idle = await probeFor(4000, idleTimings);
  const idleTraces = (await instance.engineStats()).recentFirstTokens;
  const idleStats = await instance.engineStats();
  let stop = false;
  let measuring = false;
  // The background's own TTFT (requests started in the probe window) and tokens/s (requests ended in it):
  // what a prefill order trades for the probes'.
  const backgroundTtft: number[] = [];
  let backgroundEnded = 0;
  const background = Array.from({ length: 31 }, async (_, c) => {
    const own = mulberry32(100 + c);
    // TTFT_STAGGERED=1: first lengths spread over 8..256, so restarts come one at a time (no waves).
    let length = process.env['TTFT_STAGGERED'] === '1' ? 8 + Math.floor((c * 248) / 31) : 256;
    while (!stop) {
      const counted = measuring;
      const first = await timedRequest(instance, promptFor(own), length);
      length = 256;
      if (counted) backgroundTtft.push(first);
      if (measuring) backgroundEnded += 1;
    }
  });
  await new Promise((r) => setTimeout(r, 1000));
  measuring = true;
  const busyStart = performance.now();
  // Long enough for several waves of 31 restarts (TTFT_BUSY_MS; 8 s unless told).
  const busyTimings: ProbeTiming[] = [];
  const busy = await probeFor(Number(process.env['TTFT_BUSY_MS'] ?? 8000), busyTimings);
  measuring = false;
  const busyS = (performance.now() - busyStart) / 1000;
  stop = true;
  await Promise.all(background);
  const stats = await instance.engineStats();
  await instance.close();
  // Where a newcomer's first token goes inside the engine, beside the busy run (every prefill of the busy part counts):
  // waiting for the run in flight, then its own prefill run; the rest of the probe's TTFT is delivery to the caller.
  const busyPrefills = stats.prefills - idleStats.prefills;
  const perPrefill = (key: 'admissionWaitNs' | 'firstTokenNs') => (stats[key] - idleStats[key]) / busyPrefills / 1e6;
  const idlePerPrefill = (key: 'admissionWaitNs' | 'firstTokenNs') => idleStats[key] / idleStats.prefills / 1e6;
  const breakdown = {
    idle: { waitMs: idlePerPrefill('admissionWaitNs'), prefillMs: idlePerPrefill('firstTokenNs') - idlePerPrefill('admissionWaitNs') },
    busy: { waitMs: perPrefill('admissionWaitNs'), prefillMs: perPrefill('firstTokenNs') - perPrefill('admissionWaitNs') },
  };
  const idleP = percentiles(idle);
  const busyP = percentiles(busy);
  return {
    idleMs: idleP,
    busyMs: busyP,
    busyVsIdleP99: busyP.p99 / idleP.p99,
    busyVsIdleP50: busyP.p50 / idleP.p50,
    engineMeanMs: breakdown,
    backgroundTtftMs: percentiles(backgroundTtft),
    backgroundTokensPerSecond: (backgroundEnded * 256) / busyS,
    idleBreakdown: breakdownOf(idleTimings, idleTraces, MIN_TOKENS),
    busyBreakdown: breakdownOf(busyTimings, stats.recentFirstTokens, MIN_TOKENS),
    engine: { ...stats, recentFirstTokens: stats.recentFirstTokens.length },
  };
}

async function prefillCost(): Promise<object> {
  const session = await ort.InferenceSession.create(join(modelDir, '1', 'model.onnx'), { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const pasts = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = session.inputMetadata.find((m) => m.name === pasts[0]);
  const [, heads, , headDim] = meta?.isTensor === true ? (meta.shape as number[]) : [];
  const run = async (rows: number, length: number): Promise<void> => {
    const int64 = (f: (i: number) => bigint) => new ort.Tensor('int64', BigInt64Array.from({ length: rows * length }, (_, i) => f(i)), [rows, length]);
    const feeds: Record<string, ort.Tensor> = { input_ids: int64(() => 65n), position_ids: int64((i) => BigInt(i % length)), attention_mask: int64(() => 1n) };
    for (const name of pasts) feeds[name] = new ort.Tensor('float32', new Float32Array(0), [rows, heads as number, 0, headDim as number]);
    await session.run(feeds);
  };
  const runs: object[] = [];
  for (const [rows, length] of [[1, 16], [1, 45], [1, 80], [4, 45], [8, 45], [16, 45], [31, 45], [8, 80], [31, 80]] as const) {
    await run(rows, length);
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round++) {
      const before = process.cpuUsage();
      for (let i = 0; i < 3; i++) await run(rows, length);
      const used = process.cpuUsage(before);
      best = Math.min(best, (used.user + used.system) / 1000 / 3);
    }
    runs.push({ rows, length, cpuMsPerRun: best, cpuMsPerPrompt: best / rows, cpuUsPerToken: (best * 1000) / (rows * length) });
  }
  await session.release();
  return { runs };
}

/**
 * `positions`: bare onnxruntime (one thread): CPU per decode run of 16 rows at cached lengths 8..448 (best of
 * 5 rounds of 5), fetching the logits only, so what grows with the length is the model's own work per cached
 * position (attention over the past and the concatenation of past and new keys/values into the presents).
 * The line fitted through the points gives a row's fixed cost and its cost per cached position.
 */
async function positionCost(): Promise<object> {
  const session = await ort.InferenceSession.create(join(modelDir, '1', 'model.onnx'), { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const pasts = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = session.inputMetadata.find((m) => m.name === pasts[0]);
  const [, heads, , headDim] = meta?.isTensor === true ? (meta.shape as number[]) : [];
  const rows = 16;
  const run = async (past: number): Promise<void> => {
    const int64 = (width: number, f: (i: number) => bigint) => new ort.Tensor('int64', BigInt64Array.from({ length: rows * width }, (_, i) => f(i)), [rows, width]);
    const feeds: Record<string, ort.Tensor> = { input_ids: int64(1, () => 65n), position_ids: int64(1, () => BigInt(past)), attention_mask: int64(past + 1, () => 1n) };
    const cache = new Float32Array(rows * (heads as number) * past * (headDim as number)).fill(0.01);
    for (const name of pasts) feeds[name] = new ort.Tensor('float32', cache, [rows, heads as number, past, headDim as number]);
    await session.run(feeds, ['logits']);
  };
  const points: { past: number; cpuUsPerRow: number }[] = [];
  for (const past of [8, 32, 64, 128, 192, 256, 384, 448]) {
    await run(past);
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 5; round++) {
      const before = process.cpuUsage();
      for (let i = 0; i < 5; i++) await run(past);
      const used = process.cpuUsage(before);
      best = Math.min(best, (used.user + used.system) / 5 / rows);
    }
    points.push({ past, cpuUsPerRow: best });
  }
  await session.release();
  // Least squares: cpuUsPerRow = fixed + perPosition × past.
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.past, 0) / n;
  const my = points.reduce((a, p) => a + p.cpuUsPerRow, 0) / n;
  const perPosition = points.reduce((a, p) => a + (p.past - mx) * (p.cpuUsPerRow - my), 0) / points.reduce((a, p) => a + (p.past - mx) ** 2, 0);
  const fixed = my - perPosition * mx;
  return { rows, points, fit: { fixedUsPerRow: fixed, usPerRowPerPosition: perPosition, shareAtPast132: (perPosition * 132) / (fixed + perPosition * 132) } };
}

/**
 * `runs`: bare onnxruntime (one thread): CPU per decode run of `rows` rows at `past` cached positions (best of 5
 * rounds of 5, logits fetched), fitted by least squares to perRun + perRow × rows + perRowPosition × rows × past.
 */
async function runCost(): Promise<object> {
  const session = await ort.InferenceSession.create(join(modelDir, '1', 'model.onnx'), { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const pasts = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = session.inputMetadata.find((m) => m.name === pasts[0]);
  const [, heads, , headDim] = meta?.isTensor === true ? (meta.shape as number[]) : [];
  const points: { rows: number; past: number; cpuUs: number }[] = [];
  for (const rows of [1, 2, 4, 8, 16, 32]) {
    for (const past of [32, 64, 128, 192, 256]) {
      const int64 = (width: number, f: (i: number) => bigint) => new ort.Tensor('int64', BigInt64Array.from({ length: rows * width }, (_, i) => f(i)), [rows, width]);
      const feeds: Record<string, ort.Tensor> = { input_ids: int64(1, () => 65n), position_ids: int64(1, () => BigInt(past)), attention_mask: int64(past + 1, () => 1n) };
      const cache = new Float32Array(rows * (heads as number) * past * (headDim as number)).fill(0.01);
      for (const name of pasts) feeds[name] = new ort.Tensor('float32', cache, [rows, heads as number, past, headDim as number]);
      await session.run(feeds, ['logits']);
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 5; round++) {
        const before = process.cpuUsage();
        for (let i = 0; i < 5; i++) await session.run(feeds, ['logits']);
        const used = process.cpuUsage(before);
        best = Math.min(best, (used.user + used.system) / 5);
      }
      points.push({ rows, past, cpuUs: best });
    }
  }
  await session.release();
  return { points, fit: fitPlane(points.map((p) => [1, p.rows, p.rows * p.past]), points.map((p) => p.cpuUs)) };
}

/** Least squares for three coefficients (normal equations, Gaussian elimination). */
function fitPlane(xs: number[][], ys: number[]): { perRunUs: number; perRowUs: number; perRowPositionUs: number } {
  const m = [0, 1, 2].map((i) => [...[0, 1, 2].map((j) => xs.reduce((s, x) => s + (x[i] as number) * (x[j] as number), 0)), xs.reduce((s, x, k) => s + (x[i] as number) * (ys[k] as number), 0)]);
  for (let i = 0; i < 3; i++) {
    for (let k = i + 1; k < 3; k++) {
      const f = (m[k]![i] as number) / (m[i]![i] as number);
      for (let j = i; j < 4; j++) m[k]![j] = (m[k]![j] as number) - f * (m[i]![j] as number);
    }
  }
  const c = [0, 0, 0];
  for (let i = 2; i >= 0; i--) {
    let s = m[i]![3] as number;
    for (let j = i + 1; j < 3; j++) s -= (m[i]![j] as number) * (c[j] as number);
    c[i] = s / (m[i]![i] as number);
  }
  return { perRunUs: c[0] as number, perRowUs: c[1] as number, perRowPositionUs: c[2] as number };
}

async function wave(): Promise<object> {
  const instance = await startInstance();
  const random = mulberry32(29);
  const idle: number[] = [];
  for (let i = 0; i < 20; i++) idle.push(await timedRequest(instance, promptFor(random), 8));
  const probe: number[] = [];
  const members: number[] = [];
  const roundsS: number[] = [];
  const rounds = Number(process.env['WAVE_ROUNDS'] ?? 10);
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    const wave = Array.from({ length: 31 }, () => timedRequest(instance, promptFor(random), 64));
    const behind = timedRequest(instance, promptFor(random), 8);
    probe.push(await behind);
    members.push(...(await Promise.all(wave)));
    roundsS.push((performance.now() - start) / 1000);
  }
  // The wave members' prefill runs as the engine saw them: a request landing during a wave waits for the run in flight.
  const stats = await instance.engineStats();
  const memberRuns = stats.recentFirstTokens.filter((t) => t.maxTokens === 64);
  await instance.close();
  const idleP = percentiles(idle);
  const probeP = percentiles(probe);
  return {
    idleProbeMs: idleP,
    probeBehindWaveMs: probeP,
    probeBehindWaveVsIdleP50: probeP.p50 / idleP.p50,
    waveMemberMs: percentiles(members),
    // 31 × 64 + 8 tokens per round.
    tokensPerSecond: (rounds * (31 * 64 + 8)) / roundsS.reduce((a, b) => a + b, 0),
    prefillRuns: stats.prefillRuns,
    paddedTokensPerPrefillRun: stats.prefillPaddedTokens / Math.max(1, stats.prefillRuns),
    // Per member, its prefill run's padded tokens and (TESSERA_LLM_TRACE_CPU=1) the engine thread's CPU ms in it.
    memberRunPaddedTokens: percentiles(memberRuns.map((t) => t.prefillPaddedTokens)),
    memberRunCpuMs: percentiles(memberRuns.map((t) => t.prefillCpuMs).filter(Number.isFinite)),
  };
}

const result =
  mode === 'anchor' ? await anchor() : mode === 'ttft' ? await ttft() : mode === 'wave' ? await wave() : mode === 'prefill' ? await prefillCost() : mode === 'positions' ? await positionCost() : mode === 'runs' ? await runCost() : await copy();
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
