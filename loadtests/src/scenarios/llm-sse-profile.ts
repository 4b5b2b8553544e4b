/**
 * A CPU profile of the node's main thread while it streams tiny_decoder's tokens to 32 closed-loop
 * clients (node on core 0, load on core 1): where the event loop's per-token microseconds go, for the
 * SSE path's report. The node runs from BUNDLE_DIR with `--cpu-prof`; the main thread's profile is
 * summarized by cpu-profile-summary.ts.
 *
 *   node --import tsx loadtests/src/scenarios/llm-sse-profile.ts BUNDLE_DIR SECONDS OUT_DIR
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { tinyDecoderFiles } from '../../../gpu-node/src/example-models/tiny-decoder.js';
import { summarizeProfile } from '../perf/cpu-profile-summary.js';
import { perCoreSupport, pinProcess } from '../lib/per-core/index.js';
import { launchNode, waitForModelReady } from '../lib/processes/node-process.js';
import { closedLoop, windowFigures } from './llm-stream-client.js';

const [bundle, secondsText = '10', out] = process.argv.slice(2);
if (bundle === undefined || out === undefined) throw new Error('usage: llm-sse-profile.ts BUNDLE_DIR SECONDS OUT_DIR');
const repo = await mkdtemp(join(tmpdir(), 'tessera-llm-sse-prof-'));
const profiles = join(out, 'profiles');
await mkdir(profiles, { recursive: true });
for (const file of tinyDecoderFiles({ name: 'tiny_decoder', maxNumSeqs: 32, kvCacheBytes: 128 * 1024 * 1024 })) {
  const path = join(repo, 'tiny_decoder', file.path);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, file.contents);
}
process.env.TESSERA_BUNDLE_DIR = bundle;
const pinned = perCoreSupport().ok;
const node = await launchNode({ modelRepository: repo, ...(pinned ? { pinCore: 0 } : {}), nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profiles}`] });
try {
  if (pinned) pinProcess(process.pid, 1);
  await waitForModelReady(node.httpBase, 'tiny_decoder');
  const from = performance.now();
  const until = from + Number(secondsText) * 1000;
  const records = await closedLoop(node.httpBase, 'tiny_decoder', 32, until, 1);
  const figures = windowFigures(records, from, until);
  process.stdout.write(`${figures.tokensPerSecond.toFixed(0)} tok/s over ${secondsText} s\n`);
} finally {
  await node.stop();
  await rm(repo, { recursive: true, force: true });
}
// The main thread's profile is the one whose file name carries thread id 0 (`.<pid>.0.<seq>`).
for (const name of await readdir(profiles)) {
  if (!/\.\d+\.0\.\d+\.cpuprofile$/.test(name)) continue;
  const summary = summarizeProfile(JSON.parse(await readFile(join(profiles, name), 'utf8')));
  const lines = [`main thread ${name}: ${(summary.busyUs / 1000).toFixed(0)} ms busy`, 'by function:'];
  for (const f of summary.byFunction.slice(0, 30)) lines.push(`  ${(f.share * 100).toFixed(1)}%  ${f.name}`);
  lines.push('by file:');
  for (const f of summary.byFile.slice(0, 15)) lines.push(`  ${(f.share * 100).toFixed(1)}%  ${f.name}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
