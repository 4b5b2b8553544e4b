/**
 * Why the node's main isolate runs mark-compacts under the `mlp_large` wave (issue 18): one node alone on core 0
 * with `--trace-gc --trace-incremental-marking`, the 64 callers on core 1, REQUESTS inferences per protocol. The
 * node's own stdout is read: every main-isolate Mark-Compact line with its reason (the collector's reason, and what
 * started the incremental marking before it), and the node's `process.memoryUsage()` and old-space size sampled
 * every 250 ms by a preloaded module (`--import`, main thread only), so the external and ArrayBuffer memory at
 * each mark-compact can be read beside it.
 *
 * GC_REASONS_FLAGS adds node flags (space-separated); lines containing GC_REASONS_KEEP are kept too (e.g. `pretenuring`).
 *
 *   node --import tsx loadtests/src/scenarios/node-gc-reasons.ts BUNDLE_DIR [REQUESTS] [OUT.json]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { writeExampleRepository } from '../../../gpu-node/src/example-models/index.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { sendClosedLoop } from '../lib/load/closed-loop.js';
import { perCoreSupport, pinProcess } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady } from '../lib/processes/node-process.js';
import { fp32Tensor } from './batching-requests.js';
import { MLP_INPUT, MLP_MODEL, MLP_OUTPUT, MLP_WIDTH, mlpConfigText } from './batching-configs.js';

const CONCURRENCY = 64;
const SAMPLE_PREFIX = 'GC_REASONS_SAMPLE ';

/** Preloaded into the node: prints its memory on stdout, main thread only (workers load `--import` too). */
const SAMPLER = `
import { isMainThread } from 'node:worker_threads';
import { getHeapSpaceStatistics } from 'node:v8';
if (isMainThread) {
  setInterval(() => {
    const m = process.memoryUsage();
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, Math.round(s.space_used_size / 1024)]));
    process.stdout.write('${SAMPLE_PREFIX}' + JSON.stringify({ t: Math.round(performance.now()), heapUsedKiB: Math.round(m.heapUsed / 1024), externalKiB: Math.round(m.external / 1024), arrayBuffersKiB: Math.round(m.arrayBuffers / 1024), rssMiB: Math.round(m.rss / 1048576), spaces }) + '\\n');
  }, 250).unref();
}
`;

const request: InferRequest = { id: '', modelName: MLP_MODEL, inputs: [fp32Tensor(MLP_INPUT, MLP_WIDTH)], outputs: [{ name: MLP_OUTPUT }], parameters: {} };

interface Phase {
  protocol: 'http' | 'grpc';
  /** Every main-isolate line that is not a Scavenge: Mark-Compacts and incremental-marking starts. */
  lines: string[];
  scavengeReasons: Record<string, number>;
  samples: unknown[];
}

async function drive(client: InferClient, count: number): Promise<void> {
  await sendClosedLoop(count, CONCURRENCY, () => client.infer(request));
}

/** "... current mu = 0.9) finalize incremental marking via task; GC in old space requested" -> the text after the last ')'. */
function reasonOf(line: string): string {
  return line.slice(line.lastIndexOf(')') + 1).trim();
}

async function main(): Promise<void> {
  const [bundleDir, requestsText = '25000', out] = process.argv.slice(2);
  if (bundleDir === undefined) throw new Error('usage: node-gc-reasons.ts BUNDLE_DIR [REQUESTS] [OUT.json]');
  const count = Number(requestsText);
  const pinned = perCoreSupport().ok;
  const work = await mkdtemp(join(tmpdir(), 'tessera-gc-reasons-'));
  process.env.TESSERA_BUNDLE_DIR = bundleDir;
  let phase: Phase | undefined;
  let mainIsolate: string | undefined;
  const phases: Phase[] = [];
  try {
    await writeExampleRepository(work, { only: [MLP_MODEL] });
    const setup = { id: 'pref64', instances: 1, intraOpThreads: 1, dynamicBatching: { preferredBatchSizes: [64], maxQueueDelayUs: 60_000 } };
    await writeFile(join(work, MLP_MODEL, 'config.pbtxt'), mlpConfigText(setup));
    const sampler = join(work, 'gc-sampler.mjs');
    await writeFile(sampler, SAMPLER);
    const node = await launchNode({
      modelRepository: work,
      ...(pinned ? { pinCore: 0 } : {}),
      nodeFlags: [
        '--trace-gc',
        '--trace-incremental-marking',
        ...(process.env.GC_REASONS_FLAGS ?? '').split(' ').filter((flag) => flag !== ''),
        '--import',
        pathToFileURL(sampler).href,
      ],
      onStdoutLine: (line) => {
        if (phase === undefined) {
          mainIsolate ??= /^\[\d+:(0x[0-9a-f]+)\]/.exec(line)?.[1];
          return;
        }
        if (line.startsWith(SAMPLE_PREFIX)) {
          phase.samples.push(JSON.parse(line.slice(SAMPLE_PREFIX.length)));
          return;
        }
        const isolate = /^\[\d+:(0x[0-9a-f]+)\]/.exec(line)?.[1];
        if (isolate !== undefined && isolate !== mainIsolate) return;
        if (line.includes(' Scavenge ')) {
          const reason = reasonOf(line);
          phase.scavengeReasons[reason] = (phase.scavengeReasons[reason] ?? 0) + 1;
        } else if (/Mark-Compact|IncrementalMarking\] Start|Mark-sweep/.test(line) || (process.env.GC_REASONS_KEEP !== undefined && line.includes(process.env.GC_REASONS_KEEP))) {
          phase.lines.push(line);
        }
      },
    });
    try {
      await waitForModelReady(node.httpBase, MLP_MODEL);
      if (pinned) pinProcess(process.pid, 1);
      for (const protocol of ['http', 'grpc'] as const) {
        const client = protocol === 'http' ? createHttpInferClient('127.0.0.1', node.httpPort, CONCURRENCY) : createGrpcInferClient('127.0.0.1', node.grpcPort);
        try {
          await drive(client, 1000);
          phase = { protocol, lines: [], scavengeReasons: {}, samples: [] };
          await drive(client, count);
          await new Promise((resolve) => setTimeout(resolve, 300));
          phases.push(phase);
          phase = undefined;
        } finally {
          await client.close();
        }
      }
    } finally {
      await node.stop();
    }
    for (const p of phases) {
      const mcs = p.lines.filter((line) => line.includes('Mark-Compact'));
      const reasons: Record<string, number> = {};
      for (const line of mcs) reasons[reasonOf(line)] = (reasons[reasonOf(line)] ?? 0) + 1;
      const starts: Record<string, number> = {};
      for (const line of p.lines.filter((l) => l.includes('IncrementalMarking] Start'))) {
        const reason = /Start \(([^)]*)\)/.exec(line)?.[1] ?? line;
        starts[reason] = (starts[reason] ?? 0) + 1;
      }
      process.stdout.write(`${p.protocol}: ${mcs.length} main-isolate mark-compacts in ${count} inferences (${((mcs.length * 1000) / count).toFixed(2)} per 1,000)\n`);
      process.stdout.write(`  collector reasons: ${JSON.stringify(reasons)}\n  marking started by: ${JSON.stringify(starts)}\n  scavenge reasons: ${JSON.stringify(p.scavengeReasons)}\n`);
      for (const line of mcs.slice(0, 4)) process.stdout.write(`  ${line}\n`);
    }
    if (out !== undefined) await writeFile(out, `${JSON.stringify({ command: process.argv.join(' '), bundleDir, requests: count, phases }, null, 2)}\n`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
