/**
 * Two builds of the node, A and B, serving tiny_decoder's generate_stream per core in short windows taken
 * in turns (A B, B A, ...), both nodes up the whole time on core 0 and the load (this process) on core 1:
 * 32 closed-loop streams of 8..256 tokens on the continuous-batching model, then the same on its
 * one-sequence-at-a-time twin (max_num_seqs 1). Per window: tokens/s and the node's CPU per token, split
 * into the main thread (the event loop: HTTP, SSE events, the backend's host side) and the rest (the
 * engine thread, onnxruntime, helpers). Windows in turns expose both builds to the same moments of a box
 * whose speed moves by tens of percent within minutes; medians of each side are what compare.
 * LLM_SSE_AB_SETUPS=continuous,static (a comma list of continuous, oneAtATime, static; default the first two) adds
 * the whole-request static baseline of the llm-batching bench (32 requests sent together, each asking for the
 * batch's longest length, only its own tokens counted) on the continuous model: its ratio taken in turns.
 *
 *   node --import tsx loadtests/src/scenarios/llm-sse-ab.ts A_BUNDLE_DIR B_BUNDLE_DIR [ROUNDS] [WINDOW_S] [OUT.json]
 *
 * A bundle dir is a `npm run build` output (dist/); each node runs from its own (TESSERA_BUNDLE_DIR).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { tinyDecoderFiles } from '../../../gpu-node/src/example-models/tiny-decoder.js';
import { DEFAULT_BUSY_PREFILL_TOKENS } from '../../../gpu-node/src/backends/onnxruntime-llm/prefill-cap.js';
import { perCoreSupport, pinProcess, readThreadCpu, threadCpuDelta } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { median } from '../lib/sampling/percentiles.js';
import { mulberry32 } from '../../../gpu-node/src/example-models/prng.js';
import { closedLoop, wholeRequestBatch, windowFigures, type StreamRecord } from './llm-stream-client.js';

const STREAMS = 32;
// static runs on a twin grouped as before busy_prefill_group_tokens (llm-batching.ts says why); a build that predates
// the parameter ignores it.
const SETUPS = { continuous: 'tiny_decoder', oneAtATime: 'tiny_decoder_seq1', static: 'tiny_decoder_whole' } as const;
type Setup = keyof typeof SETUPS;

/** The setups to take in turns (LLM_SSE_AB_SETUPS), continuous first: every ratio is continuous over another. */
function chosenSetups(): Setup[] {
  const listed = (process.env['LLM_SSE_AB_SETUPS'] ?? 'continuous,oneAtATime').split(',').map((s) => s.trim());
  for (const s of listed) if (!(s in SETUPS)) throw new Error(`LLM_SSE_AB_SETUPS: unknown setup '${s}' (continuous, oneAtATime, static)`);
  return ['continuous', ...(listed.filter((s) => s !== 'continuous') as Setup[])];
}

/** 32 closed-loop streams, or whole-request static batches of 32 one after another (`static`), until `toMs`. */
async function load(node: RunningNode, setup: Setup, toMs: number, seed: number): Promise<StreamRecord[]> {
  if (setup !== 'static') return closedLoop(node.httpBase, SETUPS[setup], STREAMS, toMs, seed);
  const random = mulberry32(seed);
  const records: StreamRecord[] = [];
  while (performance.now() < toMs) records.push(...(await wholeRequestBatch(node.httpBase, SETUPS.static, STREAMS, random, 'static')));
  return records;
}

interface Window {
  readonly build: 'A' | 'B';
  readonly setup: Setup;
  readonly round: number;
  readonly tokensPerSecond: number;
  readonly errors: number;
  /** Node CPU per token, µs: all threads, the main thread, and all the others. */
  readonly totalUs: number;
  readonly mainUs: number;
  readonly otherUs: number;
}

async function writeModel(repo: string, name: string, maxNumSeqs: number, parameters: Record<string, string> = {}): Promise<void> {
  for (const file of tinyDecoderFiles({ name, maxNumSeqs, kvCacheBytes: 128 * 1024 * 1024, parameters })) {
    const path = join(repo, name, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.contents);
  }
}

async function window(node: RunningNode, setup: Setup, seconds: number, seed: number): Promise<Omit<Window, 'build' | 'setup' | 'round'>> {
  const warmupMs = 1000;
  const start = performance.now();
  const fromMs = start + warmupMs;
  const toMs = fromMs + seconds * 1000;
  let before: Awaited<ReturnType<typeof readThreadCpu>> = [];
  let after: Awaited<ReturnType<typeof readThreadCpu>> = [];
  const cpu = (async () => {
    await new Promise((r) => setTimeout(r, fromMs - performance.now()));
    before = await readThreadCpu(node.pid);
    await new Promise((r) => setTimeout(r, toMs - performance.now()));
    after = await readThreadCpu(node.pid);
  })();
  const records = await load(node, setup, toMs, seed);
  await cpu;
  const figures = windowFigures(records, fromMs, toMs);
  const split = threadCpuDelta(before, after, node.pid);
  const tokens = figures.tokensPerSecond * seconds;
  return {
    tokensPerSecond: figures.tokensPerSecond,
    errors: figures.errors,
    totalUs: split.totalUs / tokens,
    mainUs: split.eventLoopUs / tokens,
    otherUs: (split.totalUs - split.eventLoopUs) / tokens,
  };
}

async function main(): Promise<void> {
  const [aDir, bDir, roundsText = '4', windowText = '6', out] = process.argv.slice(2);
  if (aDir === undefined || bDir === undefined) throw new Error('usage: llm-sse-ab.ts A_BUNDLE_DIR B_BUNDLE_DIR [ROUNDS] [WINDOW_S] [OUT.json]');
  const support = perCoreSupport();
  if (!support.ok) {
    process.stdout.write(`skipped: ${support.why}\n`);
    return;
  }
  const rounds = Number(roundsText);
  const seconds = Number(windowText);
  const repo = await mkdtemp(join(tmpdir(), 'tessera-llm-sse-ab-'));
  const nodes: Record<'A' | 'B', RunningNode | undefined> = { A: undefined, B: undefined };
  try {
    await writeModel(repo, SETUPS.continuous, STREAMS);
    await writeModel(repo, SETUPS.oneAtATime, 1);
    await writeModel(repo, SETUPS.static, STREAMS, { busy_prefill_group_tokens: String(DEFAULT_BUSY_PREFILL_TOKENS) });
    const setups = chosenSetups();
    for (const [build, dir] of [['A', aDir], ['B', bDir]] as const) {
      process.env.TESSERA_BUNDLE_DIR = dir;
      nodes[build] = await launchNode({ modelRepository: repo, pinCore: 0 });
      for (const model of new Set(Object.values(SETUPS))) await waitForModelReady(nodes[build]!.httpBase, model);
    }
    pinProcess(process.pid, 1);
    const windows: Window[] = [];
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? (['A', 'B'] as const) : (['B', 'A'] as const);
      for (const setup of setups) {
        for (const build of order) {
          const w = await window(nodes[build]!, setup, seconds, round);
          windows.push({ build, setup, round, ...w });
          process.stderr.write(
            `round ${round} ${setup} ${build}: ${w.tokensPerSecond.toFixed(0)} tok/s, node ${w.totalUs.toFixed(0)} us/token (main ${w.mainUs.toFixed(1)}, others ${w.otherUs.toFixed(1)}), errors ${w.errors}\n`,
          );
        }
      }
    }
    const med = (build: 'A' | 'B', setup: Setup, f: (w: Window) => number): number => median(windows.filter((w) => w.build === build && w.setup === setup).map(f));
    const lines = [
      '| build | setup | median tok/s | median node µs/token | main thread | other threads | windows |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    ];
    for (const build of ['A', 'B'] as const) {
      for (const setup of setups) {
        lines.push(
          `| ${build} | ${setup} | ${med(build, setup, (w) => w.tokensPerSecond).toFixed(0)} | ${med(build, setup, (w) => w.totalUs).toFixed(1)} | ` +
            `${med(build, setup, (w) => w.mainUs).toFixed(1)} | ${med(build, setup, (w) => w.otherUs).toFixed(1)} | ${windows.filter((w) => w.build === build && w.setup === setup).length} |`,
        );
      }
    }
    // The ratios per round (continuous over another setup, same build, same round), then their median.
    const ratios = (build: 'A' | 'B', other: Setup, f: (w: Window) => number) =>
      Array.from({ length: rounds }, (_, i) => {
        const c = windows.find((w) => w.build === build && w.setup === 'continuous' && w.round === i + 1);
        const o = windows.find((w) => w.build === build && w.setup === other && w.round === i + 1);
        return c === undefined || o === undefined ? Number.NaN : f(c) / f(o);
      });
    const names: Record<Setup, string> = { continuous: 'continuous', oneAtATime: 'one at a time', static: 'whole-request static' };
    const ratioLines = setups.slice(1).flatMap((other) =>
      (['A', 'B'] as const).map((build) => {
        const tps = ratios(build, other, (w) => w.tokensPerSecond);
        const perCpu = ratios(build, other, (w) => 1 / w.totalUs);
        return `- ${build}: continuous / ${names[other]}, median of rounds: ${median(tps).toFixed(2)}x in tokens/s (${tps.map((r) => r.toFixed(2)).join(', ')}), ${median(perCpu).toFixed(2)}x per node CPU-second (${perCpu.map((r) => r.toFixed(2)).join(', ')})`;
      }),
    );
    const table = [...lines, '', ...ratioLines].join('\n');
    process.stdout.write(`A = ${aDir}\nB = ${bDir}\n${table}\n`);
    if (out !== undefined) {
      await writeFile(out, `${JSON.stringify({ command: process.argv.join(' '), a: aDir, b: bDir, rounds, windowS: seconds, streams: STREAMS, setups, windows, table }, null, 2)}\n`);
    }
  } finally {
    await Promise.all([nodes.A?.stop(), nodes.B?.stop()]);
    await rm(repo, { recursive: true, force: true });
  }
}

await main();
