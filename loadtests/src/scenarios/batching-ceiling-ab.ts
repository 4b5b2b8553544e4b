/**
 * Issue 18's served/ceiling for two builds, in turns: `mlp_large` at concurrency 64 with `preferred_batch_size:
 * [64]` and with `[32, 64]` and a 2 ms delay, over HTTP binary and gRPC, each node alone on core 0 (both nodes of a
 * setup up the whole time), h2load on core 1. Each round measures onnxruntime's one-thread ceiling on core 0 first,
 * then every build and protocol in an order that rotates, so each window is held to a ceiling taken minutes, not
 * half an hour, from it: on a shared box the ceiling alone moves by half within minutes.
 * served/ceiling: `[64]` against the ceiling at 64, `[32, 64]` against the ceiling at the batch it formed.
 *
 *   node --import tsx loadtests/src/scenarios/batching-ceiling-ab.ts A_BUNDLE_DIR B_BUNDLE_DIR [ROUNDS] [WINDOW_S] [OUT.json]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import type { CeilingResult } from '../lib/load/ort-ceiling.js';
import { h2loadAvailable } from '../lib/load/h2load-loop.js';
import { perCoreSupport, pinProcess } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady, type RunningNode } from '../lib/processes/node-process.js';
import { median } from '../lib/sampling/percentiles.js';
import { MLP_MODEL, MLP_WIDTH, type MlpSetup } from './batching-configs.js';
import { ceilingAt, measureWithH2load, mlpRequest, pinnedCeiling, writeRepository, type MeasuredPoint } from './batching-per-core.js';

const PROTOCOLS = ['http', 'grpc'] as const;
const CONCURRENCY = 64;
const WARMUP_S = 2;
const SETUPS: readonly MlpSetup[] = [
  { id: 'pref64', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [64], maxQueueDelayUs: 60_000 } },
  { id: 'pref32-64-2ms', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [32, 64], maxQueueDelayUs: 2000 } },
];
const log = (message: string): void => void process.stderr.write(`${message}\n`);

interface Window {
  readonly setup: string;
  readonly protocol: (typeof PROTOCOLS)[number];
  readonly build: 'A' | 'B';
  readonly round: number;
  readonly servedPerSec: number;
  readonly avgBatch: number;
  readonly ceilingPerSec: number;
  readonly servedOverCeiling: number;
  readonly mainUs: number;
  readonly beyondOrtUs: number;
  readonly errors: number;
}

function windowOf(point: MeasuredPoint, setup: string, build: 'A' | 'B', round: number, ceiling: CeilingResult): Window {
  const at = ceilingAt(ceiling, setup === 'pref64' ? 64 : point.avgBatch);
  return {
    setup,
    protocol: point.protocol,
    build,
    round,
    servedPerSec: point.servedPerSec,
    avgBatch: point.avgBatch,
    ceilingPerSec: at.perSec,
    servedOverCeiling: point.servedPerSec / at.perSec,
    mainUs: point.node.eventLoopUs,
    beyondOrtUs: point.node.totalUs - at.cpuUs,
    errors: point.errors,
  };
}

function table(windows: readonly Window[]): string {
  const lines = [
    '| setup | proto | build | served/s | batch | ceiling/s | served/ceiling | main µs/inf | beyond ort µs/inf | windows |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const setup of SETUPS)
    for (const protocol of PROTOCOLS)
      for (const build of ['A', 'B'] as const) {
        const own = windows.filter((w) => w.setup === setup.id && w.protocol === protocol && w.build === build);
        if (own.length === 0) continue;
        const m = (f: (w: Window) => number, digits = 0): string => median(own.map(f)).toFixed(digits);
        lines.push(
          `| ${setup.id} | ${protocol} | ${build} | ${m((w) => w.servedPerSec)} | ${m((w) => w.avgBatch, 1)} | ${m((w) => w.ceilingPerSec)} | ` +
            `${m((w) => w.servedOverCeiling, 2)} | ${m((w) => w.mainUs)} | ${m((w) => w.beyondOrtUs)} | ${own.length} |`,
        );
      }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const [aDir, bDir, roundsText = '3', windowText = '5', out] = process.argv.slice(2);
  if (aDir === undefined || bDir === undefined) throw new Error('usage: batching-ceiling-ab.ts A_BUNDLE_DIR B_BUNDLE_DIR [ROUNDS] [WINDOW_S] [OUT.json]');
  if (!perCoreSupport().ok || !h2loadAvailable()) throw new Error('needs two cores, taskset and h2load');
  const rounds = Number(roundsText);
  const options = { scenario: 'batching-ceiling-ab', warmupS: WARMUP_S, durationS: Number(windowText), quick: true };
  const work = await mkdtemp(join(tmpdir(), 'tessera-ceiling-ab-'));
  const windows: Window[] = [];
  try {
    const base = join(work, 'base');
    await writeExampleRepository(base, { only: [MLP_MODEL, 'simple'] });
    const modelPath = join(base, MLP_MODEL, '1', 'model.onnx');
    pinProcess(process.pid, 1);
    for (const setup of SETUPS) {
      const repo = await writeRepository(work, base, setup);
      const nodes: Partial<Record<'A' | 'B', RunningNode>> = {};
      try {
        for (const [build, dir] of [['A', aDir], ['B', bDir]] as const) {
          process.env.TESSERA_BUNDLE_DIR = dir;
          nodes[build] = await launchNode({ modelRepository: repo, pinCore: 0 });
          await waitForModelReady(nodes[build].httpBase, MLP_MODEL);
        }
        for (let round = 1; round <= rounds; round++) {
          const ceiling = await pinnedCeiling(modelPath, true);
          const order = round % 2 === 1 ? (['A', 'B'] as const) : (['B', 'A'] as const);
          // The protocols take turns too: with HTTP always first, gRPC's windows always sat furthest from the
          // round's ceiling, and a box that drifts within a round read as gRPC's cost (issue 18, 2026-11-28b).
          const protocols = round % 2 === 1 ? PROTOCOLS : ([...PROTOCOLS].reverse() as (typeof PROTOCOLS)[number][]);
          for (const protocol of protocols)
            for (const build of order) {
              const node = nodes[build]!;
              const point = await measureWithH2load({ node, name: `mlp_large ${setup.id}`, protocol, concurrency: CONCURRENCY, request: mlpRequest(), outputBytes: MLP_WIDTH * 4 }, options);
              const w = windowOf(point, setup.id, build, round, ceiling);
              windows.push(w);
              log(
                `${setup.id} round ${round} ${protocol} ${build}: ${w.servedPerSec.toFixed(0)} inf/s, batch ${w.avgBatch.toFixed(1)}, ceiling ${w.ceilingPerSec.toFixed(0)}, ` +
                  `served/ceiling ${w.servedOverCeiling.toFixed(2)}, main ${w.mainUs.toFixed(0)} µs/inf, errors ${w.errors}`,
              );
            }
        }
      } finally {
        await Promise.all(Object.values(nodes).map((node) => node.stop()));
      }
    }
    const text = `A = ${aDir}\nB = ${bDir}\n${table(windows)}\n`;
    process.stdout.write(text);
    if (out !== undefined) await writeFile(out, `${JSON.stringify({ command: process.argv.join(' '), a: aDir, b: bDir, rounds, windows, table: text }, null, 2)}\n`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
