/**
 * `npm run bench -- llm-batching`: continuous batching (issue 21) per core, on tiny_decoder (~1 MB of
 * weights, cache-resident: steps cost per position) and on bench_decoder (same layout, ~45 MB of
 * weights: steps cost per weight read, as real small LLMs do; bench-decoder.ts says why), each in
 * turn: the node alone on core 0, this process (the load) on core 1. Output lengths are drawn from 8
 * to 256 tokens. `LLM_BATCHING_MODELS=tiny_decoder` (or `bench_decoder`) runs one of them.
 *
 * - tokens/s and TTFT/ITL against concurrency (1..32 closed-loop streams) on the continuous-batching model;
 * - the same model limited to one sequence at a time (max_num_seqs 1), 32 streams;
 * - whole-request dynamic batching, implemented here: 32 requests sent together, the next 32 only once
 *   the longest ended (Triton's dynamic batcher applied to generation), in two forms reported side by
 *   side: static (the issue's "batch formed once, run to its longest member": every row computes until
 *   the longest ends, as HF generate or a dynamic batcher over a non-decoupled model do) and shrinking
 *   (on this engine a finished row leaves, so later steps run over fewer rows: a stronger baseline);
 * - TTFT of short probes with 31 long generations in flight against the same probes on an idle node,
 *   under each prefill order (the default shortest_first, and arrival on a twin model `<model>_arrival`), with
 *   the background's own TTFT and tokens/s beside them (shortest_first trades the wave's TTFT for the probe's);
 * - the anchor (bare onnxruntime decoding one sequence, one thread, core 0) before and after, and the
 *   engine's KV copy cost per step (llm-engine-probe.ts, core 0).
 *
 * The four target figures (32 streams against one at a time and against static batches, TTFT p99 in waves
 * and staggered against idle) run in rounds, setups in turns (llm-batching-rounds.ts), each ratio reported
 * with its per-round values and a bootstrap 90% interval. LLM_BATCHING_PARTS=figures runs only those (the
 * quiet-box command), =ttft only the TTFT rounds; all (the default) everything above.
 *
 * Writes <--out, default loadtests/results>/<local date>/<model>/llm-batching.{json,md} and two SVG plots per model,
 * as the other benches date their folders (no pass's name in the code).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchDecoderFiles } from '../../../gpu-node/src/example-models/bench-decoder.js';
import { tinyDecoderFiles, type TinyDecoderConfigOptions } from '../../../gpu-node/src/example-models/tiny-decoder.js';
import { DEFAULT_BUSY_PREFILL_TOKENS } from '../../../gpu-node/src/backends/onnxruntime-llm/prefill-cap.js';
import { renderLineChart } from '../lib/charts/svg-chart.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, localDate } from '../lib/output/results-files.js';
import { formatTable } from '../lib/output/text-table.js';
import { perCoreSupport, pinnedCommand, pinProcess } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady } from '../lib/processes/node-process.js';
import { percentile } from '../lib/sampling/percentiles.js';
import { closedLoop } from './llm-stream-client.js';
import { measure, type Measured } from './llm-batching-windows.js';
import { formatRoundRatio, roundRatios, throughputRounds, ttftRounds } from './llm-batching-rounds.js';

const median = (values: readonly number[]): number => percentile([...values].sort((a, b) => a - b), 50);

/**
 * LLM_PROBE_GAP_MS: a drawn pause (0..this, ms) before each TTFT probe, so probes arrive at random points of
 * the engine's runs; 0 (the default, as before) sends each probe as the last one ends, which through HTTP lands
 * it just after the engine's next run started (a whole run in flight, every time).
 */
const PROBE_GAP_MS = Number(process.env['LLM_PROBE_GAP_MS'] ?? 0);
/**
 * LLM_TTFT_WINDOW_S: the measured part of each window of probes beside long generations (default 25 s, --quick its
 * usual window), LLM_TTFT_IDLE_WINDOW_S the idle one's (default half: idle probes come ~4x faster), LLM_TTFT_ROUNDS
 * how many rounds of them (default 4, --quick 1): bench_decoder gets ~3.8 probes/s beside long generations on a quiet
 * box, so 4 rounds give each loaded setup ~380 probes (one window of 20 s gave ~80: a p99 near the largest seen).
 */
const TTFT_WINDOW_S = Number(process.env['LLM_TTFT_WINDOW_S'] ?? 25);
const TTFT_IDLE_WINDOW_S = Number(process.env['LLM_TTFT_IDLE_WINDOW_S'] ?? TTFT_WINDOW_S / 2);
/**
 * LLM_BATCHING_PARTS: all (default), figures (the four target figures alone: throughput and TTFT rounds, no curve,
 * shrinking baseline, arrival order or engine probes), ttft (the TTFT rounds alone). LLM_BATCHING_ROUNDS: rounds
 * of the throughput setups at the top concurrency, in turns (default 3, --quick 1).
 */
/**
 * LLM_STATIC_BATCHES: whole batches per round of each whole-request baseline (default 8, --quick 2; even: they run in
 * mirrored pairs, static-batch-draw.ts). The quiet readings of 2026-11-28a rested on 1-2 batches a round, so the
 * draw of lengths moved the static rate by up to ~10% a round. LLM_CONTINUOUS_WINDOW_S: the measured part of each
 * continuous round at the top concurrency (default 24 s, 3x the usual window; --quick the usual window).
 */
const STATIC_BATCHES = process.env['LLM_STATIC_BATCHES'];
/**
 * LLM_WHOLE_RUN_ROWS: decode_run_rows of the whole-request baselines' twin (default 0: one run per step; until
 * 2026-11-28b it inherited the model's 16, two runs of 16 per step for a batch of 32, ~18% more engine CPU per token).
 */
const WHOLE_RUN_ROWS = process.env['LLM_WHOLE_RUN_ROWS'] ?? '0';
/** LLM_CONTINUOUS_RUN_ROWS: decode_run_rows of the continuous model and its arrival twin (default: the model's config). */
const CONTINUOUS_RUN_ROWS = process.env['LLM_CONTINUOUS_RUN_ROWS'];
const CONTINUOUS_WINDOW_S = process.env['LLM_CONTINUOUS_WINDOW_S'];
const PARTS = ['all', 'figures', 'ttft'] as const;
type Part = (typeof PARTS)[number];
const PROBE = fileURLToPath(new URL('./llm-engine-probe.ts', import.meta.url));

type DecoderFiles = (options: TinyDecoderConfigOptions) => { path: string; contents: Uint8Array | string }[];
/** The models benched, each with its writer (the config's own length_buckets default applies). */
const MODELS: Readonly<Record<string, DecoderFiles>> = { tiny_decoder: tinyDecoderFiles, bench_decoder: benchDecoderFiles };

async function writeModel(repo: string, files: DecoderFiles, name: string, maxNumSeqs: number, parameters: Record<string, string> = {}): Promise<void> {
  for (const file of files({ name, maxNumSeqs, kvCacheBytes: 128 * 1024 * 1024, parameters })) {
    const path = join(repo, name, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.contents);
  }
}

/** Runs the probe pinned to core 0 and parses its JSON line. */
function runProbe(mode: 'anchor' | 'copy' | 'wave', modelDir: string): Promise<Record<string, unknown>> {
  const [command, args] = pinnedCommand(0, process.execPath, ['--import', 'tsx', PROBE, mode, modelDir]);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`llm-engine-probe ${mode} exited ${code}`);
        resolve(JSON.parse(out.trim().split('\n').pop() ?? '') as Record<string, unknown>);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

const fmt = (v: number, digits = 1): string => (Number.isFinite(v) ? v.toFixed(digits) : '-');

export async function runLlmBatchingScenario(options: BenchOptions): Promise<number> {
  const perCore = perCoreSupport();
  if (perCore.ok) pinProcess(process.pid, 1);
  else process.stderr.write(`llm-batching: not pinned: ${perCore.why}\n`);
  const names = (process.env['LLM_BATCHING_MODELS'] ?? Object.keys(MODELS).join(',')).split(',').map((n) => n.trim());
  const part = (process.env['LLM_BATCHING_PARTS'] ?? 'all') as Part;
  if (!PARTS.includes(part)) {
    process.stderr.write(`llm-batching: unknown LLM_BATCHING_PARTS '${part}' (${PARTS.join(', ')})\n`);
    return 1;
  }
  const rounds = { throughput: roundCount('LLM_BATCHING_ROUNDS', options.quick ? 1 : 3), ttft: roundCount('LLM_TTFT_ROUNDS', options.quick ? 1 : 4) };
  const staticBatches = STATIC_BATCHES === undefined ? (options.quick ? 2 : 8) : Number(STATIC_BATCHES);
  const continuousWindowS = CONTINUOUS_WINDOW_S === undefined ? (options.quick ? options.durationS : 24) : Number(CONTINUOUS_WINDOW_S);
  const problems = [rounds.throughput, rounds.ttft].filter((r) => typeof r === 'string');
  if (!(Number.isSafeInteger(staticBatches) && staticBatches >= 2 && staticBatches <= 100 && staticBatches % 2 === 0)) problems.push(`LLM_STATIC_BATCHES must be an even whole number from 2 to 100, got '${STATIC_BATCHES}'`);
  if (!(continuousWindowS > 0 && continuousWindowS <= 3600)) problems.push(`LLM_CONTINUOUS_WINDOW_S must be a number of seconds in (0, 3600], got '${CONTINUOUS_WINDOW_S}'`);
  if (typeof rounds.throughput === 'string' || typeof rounds.ttft === 'string' || problems.length > 0) {
    process.stderr.write(`llm-batching: ${problems.join('; ')}\n`);
    return 1;
  }
  let exitCode = 0;
  for (const name of names) {
    const files = MODELS[name];
    if (files === undefined) {
      process.stderr.write(`llm-batching: unknown model '${name}' in LLM_BATCHING_MODELS (${Object.keys(MODELS).join(', ')})\n`);
      return 1;
    }
    exitCode = Math.max(exitCode, await benchModel(name, files, options, perCore, part, { throughput: rounds.throughput, ttft: rounds.ttft, staticBatches, continuousWindowS }));
  }
  return exitCode;
}

/** A positive whole count from the environment, or the default; a message for anything else. */
function roundCount(name: string, fallback: number): number | string {
  const text = process.env[name];
  if (text === undefined) return fallback;
  const value = Number(text);
  return Number.isSafeInteger(value) && value >= 1 && value <= 100 ? value : `${name} must be a whole number from 1 to 100, got '${text}'`;
}

async function benchModel(CONTINUOUS: string, files: DecoderFiles, options: BenchOptions, perCore: ReturnType<typeof perCoreSupport>, part: Part, rounds: { throughput: number; ttft: number; staticBatches: number; continuousWindowS: number }): Promise<number> {
  const RESULTS_DIR = join(options.outRoot ?? DEFAULT_RESULTS_ROOT, localDate(new Date()), CONTINUOUS);
  const ONE_AT_A_TIME = `${CONTINUOUS}_seq1`;
  const ARRIVAL = `${CONTINUOUS}_arrival`;
  // The whole-request baselines prefill a batch of 32 as the engine did before busy_prefill_group_tokens (grouped
  // up to busy_prefill_tokens), on a twin: the cap that shortens a newcomer's wait must not slow the baseline.
  // Nor must decode_run_rows: no request joins a batch formed once, so its steps run as one run of all its rows
  // (as a dynamic batcher runs its batch), not cut into runs that each read the weights again.
  const WHOLE = `${CONTINUOUS}_whole`;
  const concurrencies = options.concurrencies ?? (options.quick ? [1, 8, 32] : [1, 2, 4, 8, 16, 32]);
  const repo = await mkdtemp(join(tmpdir(), 'tessera-llm-bench-'));
  const ownRuns: Record<string, string> = CONTINUOUS_RUN_ROWS === undefined ? {} : { decode_run_rows: CONTINUOUS_RUN_ROWS };
  await writeModel(repo, files, CONTINUOUS, 32, ownRuns);
  await writeModel(repo, files, ONE_AT_A_TIME, 1);
  await writeModel(repo, files, ARRIVAL, 32, { prefill_order: 'arrival', ...ownRuns });
  await writeModel(repo, files, WHOLE, 32, { busy_prefill_group_tokens: String(DEFAULT_BUSY_PREFILL_TOKENS), decode_run_rows: WHOLE_RUN_ROWS });

  const all = part === 'all';
  const anchorBefore = all ? await runProbe('anchor', join(repo, CONTINUOUS)) : undefined;
  const node = await launchNode({ modelRepository: repo });
  let exitCode = 0;
  try {
    if (perCore.ok) pinProcess(node.pid, 0);
    await waitForModelReady(node.httpBase, CONTINUOUS);
    await waitForModelReady(node.httpBase, ONE_AT_A_TIME);
    await waitForModelReady(node.httpBase, ARRIVAL);
    await waitForModelReady(node.httpBase, WHOLE);

    const top = Math.max(...concurrencies);
    const models = { continuous: CONTINUOUS, oneAtATime: ONE_AT_A_TIME, whole: WHOLE, arrival: ARRIVAL };
    const settings = { warmupS: options.warmupS, durationS: options.durationS, top, extras: all, probeGapMs: PROBE_GAP_MS, staticBatches: rounds.staticBatches, continuousWindowS: rounds.continuousWindowS };
    const curve: Measured[] = [];
    // The curve below the top concurrency (the top is measured in the throughput rounds).
    if (all) for (const c of concurrencies.filter((c) => c < top)) curve.push(await measure(node, 'continuous batching', c, options, (until) => closedLoop(node.httpBase, CONTINUOUS, c, until, c, undefined, false, true)));
    // Without the curve before them, the rounds would start on a cold engine: a few seconds of the top load first.
    if (!all) await closedLoop(node.httpBase, CONTINUOUS, top, performance.now() + Math.max(2, options.warmupS) * 1000, 5, undefined, false, true);
    const throughput = part === 'ttft' ? undefined : await throughputRounds(node, models, settings, rounds.throughput);
    if (throughput?.continuous[0] !== undefined) curve.push(throughput.continuous[0]);
    // TTFT with long generations in flight: 31 streams of 256 tokens, and short probes beside them. The
    // streams start together, so they end and restart in waves of 31 arrivals (the target's figure); a
    // second setup staggers their first lengths so restarts spread out (no waves), reported beside it.
    const ttftWindowS = options.quick ? options.durationS : TTFT_WINDOW_S;
    const ttft = await ttftRounds(node, models, settings, rounds.ttft, ttftWindowS, options.quick ? options.durationS : TTFT_IDLE_WINDOW_S);
    await node.stop();
    const copy = all ? await runProbe('copy', join(repo, CONTINUOUS)) : undefined;
    // A probe right behind a wave of 31 arrivals, engine alone, under each prefill order.
    const wave = all ? { shortestFirst: await runProbe('wave', join(repo, CONTINUOUS)), arrival: await runProbe('wave', join(repo, ARRIVAL)) } : undefined;
    const anchorAfter = all ? await runProbe('anchor', join(repo, CONTINUOUS)) : undefined;

    const figures = roundRatios(throughput, ttft);
    // Tokens per second of node CPU: what the node would deliver with core 0 to itself. On a box where
    // other processes also run on core 0, this is the steadier of the two comparisons (medians of the rounds).
    const cpuMedian = (ms: readonly Measured[] | undefined) => median((ms ?? []).map((m) => m.cpuUsPerToken));
    const perCpu = (a: readonly Measured[] | undefined, b: readonly Measured[] | undefined) => cpuMedian(b) / cpuMedian(a);
    const ratios = {
      continuousVsOneAtATime: figures.continuousVsOneAtATime.value,
      // The issue's baseline (static), and the stronger shrinking one beside it.
      continuousVsWholeRequestStatic: figures.continuousVsWholeRequestStatic.value,
      continuousVsWholeRequestShrinking: figures.continuousVsWholeRequestShrinking?.value ?? Number.NaN,
      perCpuSecondContinuousVsOneAtATime: perCpu(throughput?.continuous, throughput?.oneAtATime),
      perCpuSecondContinuousVsWholeRequestStatic: perCpu(throughput?.continuous, throughput?.static),
      perCpuSecondContinuousVsWholeRequestShrinking: perCpu(throughput?.continuous, throughput?.shrinking),
      bestContinuousPerCpuSecondVsOneAtATime: cpuMedian(throughput?.oneAtATime) / Math.min(...curve.map((m) => m.cpuUsPerToken)),
      ttftBusyVsIdleP99: figures.ttftWavesVsIdleP99.value,
      ttftBusyStaggeredVsIdleP99: figures.ttftStaggeredVsIdleP99.value,
      ttftBusyVsIdleP99Arrival: figures.ttftWavesVsIdleP99Arrival?.value ?? Number.NaN,
      ttftBusyStaggeredVsIdleP99Arrival: figures.ttftStaggeredVsIdleP99Arrival?.value ?? Number.NaN,
      oneStreamVsAnchor: (curve.find((m) => m.concurrency === 1)?.tokensPerSecond ?? Number.NaN) / ((anchorBefore?.['tokensPerSecond'] as number | undefined) ?? Number.NaN),
    };
    const idleP99 = percentile((ttft.idle ?? []).flatMap((w) => w.ttftMs).sort((a, b) => a - b), 99);
    const result = {
      scenario: 'llm-batching',
      model: CONTINUOUS,
      part,
      date: new Date().toISOString(),
      perCore: perCore.ok ? 'node on core 0, load on core 1' : `not pinned: ${perCore.why}`,
      windows: { warmupS: options.warmupS, durationS: options.durationS, ttftBusyDurationS: ttftWindowS, ttftIdleDurationS: options.quick ? options.durationS : TTFT_IDLE_WINDOW_S, throughputRounds: rounds.throughput, ttftRounds: rounds.ttft, continuousWindowS: rounds.continuousWindowS, staticBatchesPerRound: rounds.staticBatches, wholeDecodeRunRows: WHOLE_RUN_ROWS, continuousDecodeRunRows: CONTINUOUS_RUN_ROWS ?? 'config' },
      outputTokens: '8..256 uniform (ignore_eos), greedy',
      anchor: { before: anchorBefore, after: anchorAfter },
      curve,
      throughput,
      ttft,
      kvCopy: copy,
      wave,
      figures,
      ratios,
      targets: { continuousVsOneAtATime: '>= 3', continuousVsWholeRequestStatic: '>= 1.8 (the issue: batch formed once, run to its longest member)', ttftBusyVsIdleP99: '<= 2' },
      baselines:
        'whole-request static: every row of a batch computes until its longest member ends (the issue\'s definition; HF generate, a dynamic batcher over a non-decoupled model); ' +
        'shrinking: on this engine a finished row leaves and later steps run over fewer rows, a stronger baseline than the static batching continuous batching is usually compared against',
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(join(RESULTS_DIR, 'llm-batching.json'), `${JSON.stringify(result, null, 2)}\n`);
    const throughputRows = throughput === undefined ? [] : [...throughput.continuous, ...throughput.oneAtATime, ...throughput.static, ...throughput.shrinking];
    const ttftRows = Object.values(ttft).flatMap((windows) => windows.flatMap((w) => (w.background === undefined ? [w.probes] : [w.background, w.probes])));
    const rows = [...curve.filter((m) => !throughputRows.includes(m)), ...throughputRows, ...ttftRows].map((m) => [
      m.label,
      String(m.concurrency),
      fmt(m.tokensPerSecond, 0),
      fmt(m.ttftMs.p50),
      fmt(m.ttftMs.p99),
      fmt(m.itlMs.p50, 2),
      fmt(m.itlMs.p99, 2),
      fmt(m.tpotMs.p50, 2),
      fmt(m.tpotMs.p99, 2),
      fmt(m.cpuUsPerToken, 0),
      fmt(1e6 / m.cpuUsPerToken, 0),
      String(m.errors),
    ]);
    const table = formatTable(['setup', 'streams', 'tokens/s', 'TTFT p50 ms', 'TTFT p99 ms', 'ITL p50 ms', 'ITL p99 ms', 'TPOT p50 ms', 'TPOT p99 ms', 'node CPU µs/token', 'tokens per node CPU-s', 'errors'], rows);
    const list = (values: readonly number[], digits = 1) => values.map((v) => fmt(v, digits)).join(', ');
    const summary = [
      `# llm-batching, ${CONTINUOUS} (${result.date}, part ${part})`,
      '',
      `${result.perCore}; output ${result.outputTokens}; windows ${options.warmupS} s warm-up + ${options.durationS} s (continuous at ${top} streams: ${rounds.continuousWindowS} s; whole-request baselines: ${rounds.staticBatches} whole batches a round, in mirrored pairs, decode_run_rows ${WHOLE_RUN_ROWS}; continuous decode_run_rows ${CONTINUOUS_RUN_ROWS ?? "the model's"}), ${rounds.throughput} throughput round(s) in turns; ${rounds.ttft} TTFT round(s) of ${result.windows.ttftIdleDurationS} s idle and ${ttftWindowS} s beside long generations, in turns.`,
      '',
      '```',
      table,
      '```',
      '',
      'Ratios over all rounds, with a bootstrap 90% interval (probes, seconds or batches drawn again within their window) and the value in each round:',
      '',
      `- continuous / one sequence at a time, 32 streams, tokens/s: ${formatRoundRatio(figures.continuousVsOneAtATime)} (target >= 3); per node CPU-second ${fmt(ratios.perCpuSecondContinuousVsOneAtATime, 2)}x (best concurrency: ${fmt(ratios.bestContinuousPerCpuSecondVsOneAtATime, 2)}x)`,
      `- continuous / whole-request batches, static (the issue's baseline: rows kept to the batch's longest), 32 streams: ${formatRoundRatio(figures.continuousVsWholeRequestStatic)} (target >= 1.8); per node CPU-second ${fmt(ratios.perCpuSecondContinuousVsWholeRequestStatic, 2)}x`,
      ...(all ? [`- continuous / whole-request batches, shrinking (finished rows leave: stronger than static), 32 streams: ${formatRoundRatio(figures.continuousVsWholeRequestShrinking)}; per node CPU-second ${fmt(ratios.perCpuSecondContinuousVsWholeRequestShrinking, 2)}x`] : []),
      `- TTFT p99 with long generations in flight / idle (waves of 31 arrivals): ${formatRoundRatio(figures.ttftWavesVsIdleP99)} (target <= 2); staggered restarts (no waves): ${formatRoundRatio(figures.ttftStaggeredVsIdleP99)}; probes ${JSON.stringify(figures.probes)}; idle p99 ${fmt(idleP99)} ms`,
      ...(all ? [`- the same under prefill_order arrival (the default is shortest_first): ${formatRoundRatio(figures.ttftWavesVsIdleP99Arrival)}; staggered ${formatRoundRatio(figures.ttftStaggeredVsIdleP99Arrival)}`] : []),
      `- ITL p99 at 32 streams, per round: ${list(figures.itlP99Ms, 2)} ms (p50 ${list(figures.itlP50Ms, 2)} ms)`,
      `- node CPU per token by thread (µs; main = the event loop, the busiest other is the engine thread): ${[...curve.filter((m) => !throughputRows.includes(m)), ...throughputRows].map((m) => `${m.label} c=${m.concurrency} ${JSON.stringify(m.busiestThreadsUsPerToken)}`).join('; ')}`,
      ...(all
        ? [
            `- anchor (bare onnxruntime, one sequence, core 0): ${fmt(anchorBefore?.['tokensPerSecond'] as number, 0)} tok/s before, ${fmt(anchorAfter?.['tokensPerSecond'] as number, 0)} after; one stream through the node / anchor: ${fmt(ratios.oneStreamVsAnchor, 2)}`,
            `- KV copies per step (engine alone, 32 streams): ${JSON.stringify(copy)}`,
            `- a probe right behind a wave of 31 arrivals (engine alone), shortest_first: ${JSON.stringify(wave?.shortestFirst)}; arrival: ${JSON.stringify(wave?.arrival)}`,
          ]
        : []),
      '',
    ].join('\n');
    await writeFile(join(RESULTS_DIR, 'llm-batching.md'), summary);
    const points = (f: (m: Measured) => number) => curve.map((m) => ({ x: m.concurrency, y: f(m) }));
    const perCpuSecond = (m: Measured) => 1e6 / m.cpuUsPerToken;
    const medianRate = (ms: readonly Measured[] | undefined) => median((ms ?? []).map((m) => m.tokensPerSecond));
    await writeFile(
      join(RESULTS_DIR, 'tokens-per-second.svg'),
      renderLineChart({
        title: `${CONTINUOUS} tokens/s against concurrent streams (node on one core)`,
        xLabel: 'concurrent streams',
        yLabel: 'tokens/s',
        series: [
          { name: 'continuous batching', points: points((m) => m.tokensPerSecond) },
          { name: 'one sequence at a time', points: [{ x: top, y: medianRate(throughput?.oneAtATime) }] },
          { name: 'whole-request batches, static', points: [{ x: top, y: medianRate(throughput?.static) }] },
          ...(all ? [{ name: 'whole-request batches, shrinking', points: [{ x: top, y: medianRate(throughput?.shrinking) }] }] : []),
          { name: 'continuous, tokens per node CPU-second', points: points(perCpuSecond) },
          { name: 'one at a time, tokens per node CPU-second', points: [{ x: top, y: 1e6 / cpuMedian(throughput?.oneAtATime) }] },
        ],
      }),
    );
    await writeFile(
      join(RESULTS_DIR, 'ttft.svg'),
      renderLineChart({
        title: `${CONTINUOUS} time to first token against concurrent streams`,
        xLabel: 'concurrent streams',
        yLabel: 'TTFT ms',
        series: [
          { name: 'p50', points: points((m) => m.ttftMs.p50) },
          { name: 'p99', points: points((m) => m.ttftMs.p99) },
          { name: 'idle probe p99', points: concurrencies.map((c) => ({ x: c, y: idleP99 })), reference: true },
        ],
      }),
    );
    process.stdout.write(summary);
  } catch (error) {
    process.stderr.write(`llm-batching: ${error instanceof Error ? error.message : String(error)}\n${node.recentLog().join('\n')}\n`);
    exitCode = 1;
  } finally {
    await node.stop();
    await rm(repo, { recursive: true, force: true });
  }
  return exitCode;
}
