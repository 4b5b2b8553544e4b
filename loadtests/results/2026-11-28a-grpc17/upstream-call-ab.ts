/**
 * In-process A/B of the gateway's gRPC upstream call, in turns: A = the transport of BASE_TREE (`/work/main`
 * at fc27193), B = this branch's (the node's answer read and checked in one pass). This
 * process's CPU (process.cpuUsage) and bytes allocated (heap growth between two forced collections, with a
 * young generation large enough that no collection runs inside a window: checked) per unary ModelInfer of
 * `simple` at c=1, against one real node on loopback.
 *
 *   BASE_TREE=/work/main [ROUNDS=8] [CALLS=1500] taskset -c 0 node --expose-gc --min-semi-space-size=128 \
 *     --max-semi-space-size=128 --import tsx loadtests/results/2026-11-28a-grpc17/upstream-call-ab.ts
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { rm } from 'node:fs/promises';
import { createStaticNodeDirectory } from '../../../gateway/src/adapters/fleet/index.js';
import { createH2Transport } from '../../../gateway/src/adapters/grpc/h2-transport.js';
import { spawnNode, writeTestRepository } from '../../../gateway/test/support/test-node-process.js';
import { simpleRequest } from '../../../gateway/test/support/test-node-requests.js';

const base = process.env.BASE_TREE ?? '/work/main';
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const CALLS = Number(process.env.CALLS ?? 1500);
const { createH2Transport: createBase } = (await import(`${base}/gateway/src/adapters/grpc/h2-transport.ts`)) as { createH2Transport: typeof createH2Transport };
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

let collections = 0;
new PerformanceObserver((list) => void (collections += list.getEntries().length)).observe({ entryTypes: ['gc'] });

const repo = await writeTestRepository();
const node = await spawnNode(repo);
const view = createStaticNodeDirectory([{ id: 'n', grpcAddress: `127.0.0.1:${node.grpcPort}` }]).all()[0]!;
const sides = { A: createBase(), B: createH2Transport() };
const requests = Array.from({ length: 64 }, (_, i) => simpleRequest(i));

async function unary(side: 'A' | 'B', calls: number): Promise<{ cpu: number; bytes: number; clean: boolean }> {
  const t = sides[side];
  gc!();
  // The forced collection's entry reaches the observer a little later: counted before the window opens.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const seen = collections;
  const heap0 = process.memoryUsage().heapUsed;
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) await t.infer(view, requests[i % 64]!, { deadline: Date.now() + 10_000 });
  const c = process.cpuUsage(c0);
  const bytes = (process.memoryUsage().heapUsed - heap0) / calls;
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { cpu: (c.user + c.system) / calls, bytes, clean: collections === seen };
}

try {
const results: Record<string, number[]> = { 'A cpu': [], 'B cpu': [], 'A bytes': [], 'B bytes': [] };
let unclean = 0;
await unary('A', 300);
await unary('B', 300);
for (let round = 0; round < ROUNDS; round++) {
  for (const side of (round % 2 === 0 ? ['A', 'B'] : ['B', 'A']) as Array<'A' | 'B'>) {
    const r = await unary(side, CALLS);
    results[`${side} cpu`]!.push(r.cpu);
    if (r.clean) results[`${side} bytes`]!.push(r.bytes);
    else unclean++;
  }
  console.log(`round ${round + 1}: ${Object.entries(results).map(([k, v]) => `${k} ${v.at(-1)?.toFixed(1)}`).join(', ')}`);
}
const med = (v: number[]) => (v.length === 0 ? Number.NaN : [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!);
const a = results['A cpu']!;
const b = results['B cpu']!;
const ratios = a.map((x, i) => b[i]! / x);
console.log(`CPU per call: A median ${med(a).toFixed(1)} µs, B median ${med(b).toFixed(1)} µs, B/A per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, B lower in ${ratios.filter((r) => r < 1).length}/${ratios.length}`);
console.log(`bytes allocated per call: A median ${med(results['A bytes']!).toFixed(0)}, B median ${med(results['B bytes']!).toFixed(0)} (windows with a collection inside, left out: ${unclean})`);
console.log(JSON.stringify({ rounds: ROUNDS, calls: CALLS, results }));
} finally {
await sides.A.close();
await sides.B.close();
node.process.kill('SIGTERM');
await node.exited;
await rm(repo, { recursive: true, force: true });
}
