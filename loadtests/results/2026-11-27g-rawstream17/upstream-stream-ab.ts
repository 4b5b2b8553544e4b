/**
 * In-process A/B of the gateway's upstream gRPC transport, in turns: A = 3bac03a's (a worktree at
 * BASE_TREE, `rawH2: true`: unary calls on the raw client, ModelStreamInfer on node:http2, two connections),
 * B = this branch's (everything on the raw client, one connection). This process's CPU (process.cpuUsage)
 * per ModelInfer of `simple` at c=1 and per ModelStreamInfer response of repeat_int32 (32 responses + the
 * final one per call, c=1), against two real nodes on loopback.
 *
 *   BASE_TREE=/tmp/rs17-base [ROUNDS=6] node --import tsx loadtests/results/2026-11-27g-rawstream17/upstream-stream-ab.ts
 */
import { rm } from 'node:fs/promises';
import { createStaticNodeDirectory } from '../../../gateway/src/adapters/fleet/index.js';
import { createH2Transport } from '../../../gateway/src/adapters/grpc/h2-transport.js';
import { writeDecoupledRepository } from '../../../gateway/test/support/decoupled-repository.js';
import { spawnNode, writeTestRepository } from '../../../gateway/test/support/test-node-process.js';
import { simpleRequest } from '../../../gateway/test/support/test-node-requests.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';

const base = process.env.BASE_TREE ?? '/tmp/rs17-base';
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const CALLS = Number(process.env.CALLS ?? 1500);
const STREAM_CALLS = Number(process.env.STREAM_CALLS ?? 150);
const { createH2Transport: createBase } = (await import(`${base}/gateway/src/adapters/grpc/h2-transport.ts`)) as { createH2Transport: (o: object) => ReturnType<typeof createH2Transport> };

const simpleRepo = await writeTestRepository();
const streamRepo = await writeDecoupledRepository();
const simpleNode = await spawnNode(simpleRepo);
const streamNode = await spawnNode(streamRepo);
const view = (port: number) => createStaticNodeDirectory([{ id: 'n', grpcAddress: `127.0.0.1:${port}` }]).all()[0]!;
const simpleView = view(simpleNode.grpcPort);
const streamView = view(streamNode.grpcPort);
const sides = { A: createBase({ rawH2: true }), B: createH2Transport() };
const u32 = (v: number[]) => new Uint8Array(Uint32Array.from(v).buffer);
const N = 32;
const repeat: InferRequest = {
  id: 'r',
  modelName: 'repeat_int32',
  inputs: [
    { name: 'IN', datatype: 'INT32', shape: [N], data: new Uint8Array(Int32Array.from({ length: N }, (_, i) => i).buffer) },
    { name: 'DELAY', datatype: 'UINT32', shape: [N], data: u32(Array(N).fill(0)) },
    { name: 'WAIT', datatype: 'UINT32', shape: [1], data: u32([0]) },
  ],
  parameters: {},
};
const requests = Array.from({ length: 64 }, (_, i) => simpleRequest(i));

async function unary(side: 'A' | 'B', calls: number): Promise<number> {
  const t = sides[side];
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) await t.infer(simpleView, requests[i % 64]!, { deadline: Date.now() + 10_000 });
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / calls;
}
async function stream(side: 'A' | 'B', calls: number): Promise<number> {
  const t = sides[side];
  let responses = 0;
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) await t.streamInfer!(streamView, repeat, { deadline: Date.now() + 10_000 }, () => responses++);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / responses;
}

const results: Record<string, number[]> = { 'A unary': [], 'B unary': [], 'A stream': [], 'B stream': [] };
await unary('A', 300); await unary('B', 300); await stream('A', 30); await stream('B', 30);
for (let round = 0; round < ROUNDS; round++) {
  for (const side of (round % 2 === 0 ? ['A', 'B'] : ['B', 'A']) as Array<'A' | 'B'>) {
    results[`${side} unary`]!.push(await unary(side, CALLS));
    results[`${side} stream`]!.push(await stream(side, STREAM_CALLS));
  }
  console.log(`round ${round + 1}: ${Object.entries(results).map(([k, v]) => `${k} ${v.at(-1)!.toFixed(1)}`).join(', ')} µs`);
}
const med = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
for (const kind of ['unary', 'stream']) {
  const a = results[`A ${kind}`]!, b = results[`B ${kind}`]!;
  const ratios = a.map((x, i) => b[i]! / x);
  console.log(`${kind}: A median ${med(a).toFixed(1)} µs, B median ${med(b).toFixed(1)} µs, B/A per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, B lower in ${ratios.filter((r) => r < 1).length}/${ratios.length}`);
}
console.log(JSON.stringify({ rounds: ROUNDS, calls: CALLS, streamCalls: STREAM_CALLS, responsesPerStream: N + 1, results }));
await sides.A.close(); await sides.B.close();
for (const n of [simpleNode, streamNode]) { n.process.kill('SIGTERM'); await n.exited; }
await rm(simpleRepo, { recursive: true, force: true }); await rm(streamRepo, { recursive: true, force: true });
