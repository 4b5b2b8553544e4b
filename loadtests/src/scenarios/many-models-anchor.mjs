// The anchor of the many-models bench: onnxruntime-node alone, in one thread, opening COUNT sessions of
// the model at MODEL with the node's settings for `simple` (one intra-op thread, sequential, all graph
// optimizations, no spinning), then one run of each. Plain JavaScript so that no compiler's memory is
// counted. Prints one JSON line: {readyMs, rssBytes, threads}.
//   node many-models-anchor.mjs MODEL COUNT
import { readdirSync, readFileSync } from 'node:fs';

const [modelPath, countText] = process.argv.slice(2);
const count = Number(countText);
const start = performance.now();
const ort = await import('onnxruntime-node');
const options = {
  intraOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
  extra: { 'session.intra_op.allow_spinning': '0' },
};
const sessions = [];
for (let i = 0; i < count; i++) sessions.push(await ort.InferenceSession.create(modelPath, options));
const readyMs = performance.now() - start;
const input = new ort.Tensor('int32', new Int32Array(16).fill(1), [1, 16]);
for (const session of sessions) await session.run({ INPUT0: input, INPUT1: input });
const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? Number.NaN);
const threads = readdirSync('/proc/self/task').length;
process.stdout.write(`${JSON.stringify({ readyMs, rssBytes: rssKb * 1024, threads })}\n`);
for (const session of sessions) await session.release();
