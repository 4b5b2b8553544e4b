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
import { readThreadCpu, threadCpuDelta } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';
import { closedLoop, probes, wholeRequestBatch, windowFigures, type StreamRecord, type WindowFigures } from './llm-stream-client.js';

/**
 * LLM_PROBE_GAP_MS: a drawn pause (0..this, ms) before each TTFT probe, so probes arrive at random points of
 * the engine's runs; 0 (the default, as before) sends each probe as the last one ends, which through HTTP lands
 * it just after the engine's next run started (a whole run in flight, every time).
 */
const PROBE_GAP_MS = Number(process.env['LLM_PROBE_GAP_MS'] ?? 0);
/**
 * LLM_TTFT_WINDOW_S: the measured part of each window of probes beside long generations (default 20 s, --quick its
 * usual window): with 8 s a p99 rested on ~115 probes on tiny_decoder and ~30 on bench_decoder, where it is the
 * largest value seen; 20 s gives tiny_decoder ~250-300 (tail21).
 */
const TTFT_WINDOW_S = Number(process.env['LLM_TTFT_WINDOW_S'] ?? 20);
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

interface Measured extends WindowFigures {
  readonly label: string;
  readonly concurrency: number;
  /** Node CPU (all threads) per generated token, µs. */
  readonly cpuUsPerToken: number;
  /** The node's busiest threads in the window, µs of CPU per token each (name/tid: the main thread's tid is the pid). */
  readonly busiestThreadsUsPerToken?: Readonly<Record<string, number>>;
}

async function measure(
  node: RunningNode,
  label: string,
  concurrency: number,
  options: BenchOptions,
  load: (untilMs: number) => Promise<StreamRecord[]>,
): Promise<Measured> {
  const start = performance.now();
  const fromMs = start + options.warmupS * 1000;
  const toMs = fromMs + options.durationS * 1000;
  let before: Awaited<ReturnType<typeof readThreadCpu>> = [];
  let after: Awaited<ReturnType<typeof readThreadCpu>> = [];
  const cpuWindow = (async () => {
    await new Promise((r) => setTimeout(r, fromMs - performance.now()));
    before = await readThreadCpu(node.pid);
    await new Promise((r) => setTimeout(r, toMs - performance.now()));
    after = await readThreadCpu(node.pid);
  })();
  const records = await load(toMs);
  await cpuWindow;
  return summarize(node, label, concurrency, windowFigures(records, fromMs, toMs), threadCpuDelta(before, after, node.pid), options.durationS);
}

/** The window's figures with the node's CPU per token (and its busiest threads'), logged as they come. */
function summarize(node: RunningNode, label: string, concurrency: number, figures: WindowFigures, cpu: ReturnType<typeof threadCpuDelta>, seconds: number): Measured {
  const tokens = figures.tokensPerSecond * seconds;
  const busiest = Object.entries(cpu.byThread)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([thread, us]) => [thread === `node/${node.pid}` || thread.endsWith(`/${node.pid}`) ? `main ${thread}` : thread, Math.round(us / tokens)] as const);
  const measured = { label, concurrency, ...figures, cpuUsPerToken: cpu.totalUs / tokens, busiestThreadsUsPerToken: Object.fromEntries(busiest) };
  process.stderr.write(
    `llm-batching: ${label} c=${concurrency}: ${figures.tokensPerSecond.toFixed(0)} tok/s, TTFT p50 ${figures.ttftMs.p50.toFixed(1)} p99 ${figures.ttftMs.p99.toFixed(1)} ms, ITL p99 ${figures.itlMs.p99.toFixed(1)} ms, errors ${figures.errors}, CPU µs/token by thread ${JSON.stringify(measured.busiestThreadsUsPerToken)}\n`,
  );
  return measured;
}

/**
 * Whole-request batches measured over whole batches (one batch of warm-up, then batches until the
 * duration has passed, CPU read at batch boundaries): a batch's first steps carry all its rows and its
 * last ones few useful rows, so a fixed window cut through a batch would flatter or punish the baseline.
 */
async function measureWholeBatches(node: RunningNode, model: string, label: string, size: number, options: BenchOptions, mode: 'static' | 'shrinking'): Promise<Measured> {
  const random = mulberry32(3);
  await wholeRequestBatch(node.httpBase, model, size, random, mode);
  const before = await readThreadCpu(node.pid);
  const fromMs = performance.now();
  const records: StreamRecord[] = [];
  while (performance.now() - fromMs < options.durationS * 1000) records.push(...(await wholeRequestBatch(node.httpBase, model, size, random, mode)));
  const toMs = performance.now();
  const after = await readThreadCpu(node.pid);
  return summarize(node, label, size, windowFigures(records, fromMs, toMs + 1), threadCpuDelta(before, after, node.pid), (toMs + 1 - fromMs) / 1000);
}

const fmt = (v: number, digits = 1): string => (Number.isFinite(v) ? v.toFixed(digits) : '-');

export async function runLlmBatchingScenario(options: BenchOptions): Promise<number> {
  const perCore = perCoreSupport();
  if (perCore.ok) pinProcess(process.pid, 1);
  else process.stderr.write(`llm-batching: not pinned: ${perCore.why}\n`);
  const names = (process.env['LLM_BATCHING_MODELS'] ?? Object.keys(MODELS).join(',')).split(',').map((n) => n.trim());
  let exitCode = 0;
  for (const name of names) {
    const files = MODELS[name];
    if (files === undefined) {
      process.stderr.write(`llm-batching: unknown model '${name}' in LLM_BATCHING_MODELS (${Object.keys(MODELS).join(', ')})\n`);
      return 1;
    }
    exitCode = Math.max(exitCode, await benchModel(name, files, options, perCore));
  }
  return exitCode;
}

async function benchModel(CONTINUOUS: string, files: DecoderFiles, options: BenchOptions, perCore: ReturnType<typeof perCoreSupport>): Promise<number> {
  const RESULTS_DIR = join(options.outRoot ?? DEFAULT_RESULTS_ROOT, localDate(new Date()), CONTINUOUS);
  const ONE_AT_A_TIME = `${CONTINUOUS}_seq1`;
  const ARRIVAL = `${CONTINUOUS}_arrival`;
  // The whole-request baselines prefill a batch of 32 as the engine did before busy_prefill_group_tokens (grouped
  // up to busy_prefill_tokens), on a twin: the cap that shortens a newcomer's wait must not slow the baseline.
  const WHOLE = `${CONTINUOUS}_whole`;
  const concurrencies = options.concurrencies ?? (options.quick ? [1, 8, 32] : [1, 2, 4, 8, 16, 32]);
  const repo = await mkdtemp(join(tmpdir(), 'tessera-llm-bench-'));
  await writeModel(repo, files, CONTINUOUS, 32);
  await writeModel(repo, files, ONE_AT_A_TIME, 1);
  await writeModel(repo, files, ARRIVAL, 32, { prefill_order: 'arrival' });
  await writeModel(repo, files, WHOLE, 32, { busy_prefill_group_tokens: String(DEFAULT_BUSY_PREFILL_TOKENS) });

  const anchorBefore = await runProbe('anchor', join(repo, CONTINUOUS));
  const node = await launchNode({ modelRepository: repo });
  let exitCode = 0;
  try {
    if (perCore.ok) pinProcess(node.pid, 0);
    await waitForModelReady(node.httpBase, CONTINUOUS);
    await waitForModelReady(node.httpBase, ONE_AT_A_TIME);
    await waitForModelReady(node.httpBase, ARRIVAL);
    await waitForModelReady(node.httpBase, WHOLE);

    const idleTtft = await measure(node, 'ttft probes, idle node', 1, options, (until) => probes(node.httpBase, CONTINUOUS, until, 7, PROBE_GAP_MS));
    const curve: Measured[] = [];
    for (const c of concurrencies) curve.push(await measure(node, 'continuous batching', c, options, (until) => closedLoop(node.httpBase, CONTINUOUS, c, until, c)));
    const top = Math.max(...concurrencies);
    const oneAtATime = await measure(node, 'one sequence at a time', top, options, (until) => closedLoop(node.httpBase, ONE_AT_A_TIME, top, until, top));
    const wholeRequestStatic = await measureWholeBatches(node, WHOLE, 'whole-request batches, static (rows kept to the longest)', top, options, 'static');
    const wholeRequestShrinking = await measureWholeBatches(node, WHOLE, 'whole-request batches, shrinking (finished rows leave)', top, options, 'shrinking');
    // TTFT with long generations in flight: 31 streams of 256 tokens, and short probes beside them. The
    // streams start together, so they end and restart in waves of 31 arrivals (the target's figure); a
    // second window staggers their first lengths so restarts spread out (no waves), reported beside it.
    const ttftOptions = options.quick ? options : { ...options, durationS: Math.max(options.durationS, TTFT_WINDOW_S) };
    const busyTtftWith = async (staggered: boolean, label: string, model = CONTINUOUS): Promise<Measured & { background: Measured }> => {
      let busy: Measured | undefined;
      const order = model === ARRIVAL ? ', prefill_order arrival' : '';
      const background = await measure(node, `long generations (background${staggered ? ', staggered' : ''}${order})`, top - 1, ttftOptions, async (until) => {
        const [background, probeRecords] = await Promise.all([
          closedLoop(node.httpBase, model, top - 1, until, 99, 256, staggered),
          (async () => {
            await new Promise((r) => setTimeout(r, 200));
            return probes(node.httpBase, model, until, 8, PROBE_GAP_MS);
          })(),
        ]);
        const fromMs = until - ttftOptions.durationS * 1000;
        busy = { label, concurrency: top, ...windowFigures(probeRecords, fromMs, until), cpuUsPerToken: Number.NaN };
        return background;
      });
      process.stderr.write(`llm-batching: ${label}: TTFT p50 ${busy?.ttftMs.p50.toFixed(1)} p99 ${busy?.ttftMs.p99.toFixed(1)} ms over ${busy?.requests} probes\n`);
      return { ...(busy as Measured), background };
    };
    // The two prefill orders in ABBA order, so a drift in the box's load does not fall on one side only.
    const busyTtft = await busyTtftWith(false, 'ttft probes, 31 long generations in flight');
    const busyTtftArrival = await busyTtftWith(false, 'ttft probes, 31 long generations in flight, prefill_order arrival', ARRIVAL);
    const busyStaggeredTtftArrival = await busyTtftWith(true, 'ttft probes, 31 long generations in flight, staggered, prefill_order arrival', ARRIVAL);
    const busyStaggeredTtft = await busyTtftWith(true, 'ttft probes, 31 long generations in flight, staggered (no waves)');
    await node.stop();
    const copy = await runProbe('copy', join(repo, CONTINUOUS));
    // A probe right behind a wave of 31 arrivals, engine alone, under each prefill order.
    const wave = { shortestFirst: await runProbe('wave', join(repo, CONTINUOUS)), arrival: await runProbe('wave', join(repo, ARRIVAL)) };
    const anchorAfter = await runProbe('anchor', join(repo, CONTINUOUS));

    const continuousTop = curve.find((m) => m.concurrency === top) as Measured;
    const busy = busyTtft;
    // Tokens per second of node CPU: what the node would deliver with core 0 to itself. On a box where
    // other processes also run on core 0, this is the steadier of the two comparisons.
    const perCpuSecond = (m: Measured) => 1e6 / m.cpuUsPerToken;
    const ratios = {
      continuousVsOneAtATime: continuousTop.tokensPerSecond / oneAtATime.tokensPerSecond,
      // The issue's baseline (static), and the stronger shrinking one beside it.
      continuousVsWholeRequestStatic: continuousTop.tokensPerSecond / wholeRequestStatic.tokensPerSecond,
      continuousVsWholeRequestShrinking: continuousTop.tokensPerSecond / wholeRequestShrinking.tokensPerSecond,
      perCpuSecondContinuousVsOneAtATime: perCpuSecond(continuousTop) / perCpuSecond(oneAtATime),
      perCpuSecondContinuousVsWholeRequestStatic: perCpuSecond(continuousTop) / perCpuSecond(wholeRequestStatic),
      perCpuSecondContinuousVsWholeRequestShrinking: perCpuSecond(continuousTop) / perCpuSecond(wholeRequestShrinking),
      bestContinuousPerCpuSecondVsOneAtATime: Math.max(...curve.map(perCpuSecond)) / perCpuSecond(oneAtATime),
      ttftBusyVsIdleP99: busy.ttftMs.p99 / idleTtft.ttftMs.p99,
      ttftBusyStaggeredVsIdleP99: busyStaggeredTtft.ttftMs.p99 / idleTtft.ttftMs.p99,
      ttftBusyVsIdleP99Arrival: busyTtftArrival.ttftMs.p99 / idleTtft.ttftMs.p99,
      ttftBusyStaggeredVsIdleP99Arrival: busyStaggeredTtftArrival.ttftMs.p99 / idleTtft.ttftMs.p99,
      oneStreamVsAnchor: (curve.find((m) => m.concurrency === 1)?.tokensPerSecond ?? Number.NaN) / (anchorBefore['tokensPerSecond'] as number),
    };
    const result = {
      scenario: 'llm-batching',
      model: CONTINUOUS,
      date: new Date().toISOString(),
      perCore: perCore.ok ? 'node on core 0, load on core 1' : `not pinned: ${perCore.why}`,
      windows: { warmupS: options.warmupS, durationS: options.durationS, ttftBusyDurationS: ttftOptions.durationS },
      outputTokens: '8..256 uniform (ignore_eos), greedy',
      anchor: { before: anchorBefore, after: anchorAfter },
      curve,
      oneAtATime,
      wholeRequestStatic,
      wholeRequestShrinking,
      ttft: { idle: idleTtft, busy, busyStaggered: busyStaggeredTtft, busyArrival: busyTtftArrival, busyStaggeredArrival: busyStaggeredTtftArrival },
      kvCopy: copy,
      wave,
      ratios,
      targets: { continuousVsOneAtATime: '>= 3', continuousVsWholeRequestStatic: '>= 1.8 (the issue: batch formed once, run to its longest member)', ttftBusyVsIdleP99: '<= 2' },
      baselines:
        'whole-request static: every row of a batch computes until its longest member ends (the issue\'s definition; HF generate, a dynamic batcher over a non-decoupled model); ' +
        'shrinking: on this engine a finished row leaves and later steps run over fewer rows, a stronger baseline than the static batching continuous batching is usually compared against',
    };
    await mkdir(RESULTS_DIR, { recursive: true });
    await writeFile(join(RESULTS_DIR, 'llm-batching.json'), `${JSON.stringify(result, null, 2)}\n`);
    const waves = [busy, busyStaggeredTtft, busyTtftArrival, busyStaggeredTtftArrival];
    const rows = [...curve, oneAtATime, wholeRequestStatic, wholeRequestShrinking, idleTtft, ...waves.flatMap((w) => [w.background, w])].map((m) => [
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
    const summary = [
      `# llm-batching, ${CONTINUOUS} (${result.date})`,
      '',
      `${result.perCore}; output ${result.outputTokens}; windows ${options.warmupS} s warm-up + ${options.durationS} s (probes beside long generations: ${ttftOptions.durationS} s).`,
      '',
      '```',
      table,
      '```',
      '',
      `- continuous / one sequence at a time, 32 streams: ${fmt(ratios.continuousVsOneAtATime, 2)}x in tokens/s, ${fmt(ratios.perCpuSecondContinuousVsOneAtATime, 2)}x in tokens per node CPU-second (best concurrency: ${fmt(ratios.bestContinuousPerCpuSecondVsOneAtATime, 2)}x) (target >= 3)`,
      `- continuous / whole-request batches, static (the issue's baseline: rows kept to the batch's longest), 32 streams: ${fmt(ratios.continuousVsWholeRequestStatic, 2)}x in tokens/s, ${fmt(ratios.perCpuSecondContinuousVsWholeRequestStatic, 2)}x per node CPU-second (target >= 1.8)`,
      `- continuous / whole-request batches, shrinking (finished rows leave: stronger than static), 32 streams: ${fmt(ratios.continuousVsWholeRequestShrinking, 2)}x in tokens/s, ${fmt(ratios.perCpuSecondContinuousVsWholeRequestShrinking, 2)}x per node CPU-second`,
      `- node CPU per token by thread (µs; main = the event loop, the busiest other is the engine thread): ${[...curve, oneAtATime, wholeRequestStatic, wholeRequestShrinking].map((m) => `${m.label} c=${m.concurrency} ${JSON.stringify(m.busiestThreadsUsPerToken)}`).join('; ')}`,
      `- TTFT p99 with long generations in flight / idle: ${fmt(ratios.ttftBusyVsIdleP99, 2)}x (target <= 2); with their restarts staggered (no waves of 31 arrivals): ${fmt(ratios.ttftBusyStaggeredVsIdleP99, 2)}x`,
      `- the same under prefill_order arrival (the default is shortest_first): ${fmt(ratios.ttftBusyVsIdleP99Arrival, 2)}x; staggered ${fmt(ratios.ttftBusyStaggeredVsIdleP99Arrival, 2)}x`,
      `- anchor (bare onnxruntime, one sequence, core 0): ${fmt(anchorBefore['tokensPerSecond'] as number, 0)} tok/s before, ${fmt(anchorAfter['tokensPerSecond'] as number, 0)} after; one stream through the node / anchor: ${fmt(ratios.oneStreamVsAnchor, 2)}`,
      `- KV copies per step (engine alone, 32 streams): ${JSON.stringify(copy)}`,
      `- a probe right behind a wave of 31 arrivals (engine alone), shortest_first: ${JSON.stringify(wave.shortestFirst)}; arrival: ${JSON.stringify(wave.arrival)}`,
      '',
    ].join('\n');
    await writeFile(join(RESULTS_DIR, 'llm-batching.md'), summary);
    const points = (f: (m: Measured) => number) => curve.map((m) => ({ x: m.concurrency, y: f(m) }));
    await writeFile(
      join(RESULTS_DIR, 'tokens-per-second.svg'),
      renderLineChart({
        title: `${CONTINUOUS} tokens/s against concurrent streams (node on one core)`,
        xLabel: 'concurrent streams',
        yLabel: 'tokens/s',
        series: [
          { name: 'continuous batching', points: points((m) => m.tokensPerSecond) },
          { name: 'one sequence at a time', points: [{ x: top, y: oneAtATime.tokensPerSecond }] },
          { name: 'whole-request batches, static', points: [{ x: top, y: wholeRequestStatic.tokensPerSecond }] },
          { name: 'whole-request batches, shrinking', points: [{ x: top, y: wholeRequestShrinking.tokensPerSecond }] },
          { name: 'continuous, tokens per node CPU-second', points: points(perCpuSecond) },
          { name: 'one at a time, tokens per node CPU-second', points: [{ x: top, y: perCpuSecond(oneAtATime) }] },
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
          { name: 'idle probe p99', points: concurrencies.map((c) => ({ x: c, y: idleTtft.ttftMs.p99 })), reference: true },
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
