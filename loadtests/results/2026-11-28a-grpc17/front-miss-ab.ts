/**
 * In-process A/B of the whole gateway for a gRPC client's no-store miss of `simple`, in turns: A = the
 * gateway of BASE_TREE (`/work/main` at fc27193), B = this branch's (the client's request and the node's
 * answer each read in one pass). Both embedded in this process (startGateway, no Redis, one static node),
 * both calling the same real node process on loopback; the client is a bare node:http2 session per
 * gateway sending prepared bytes at c=1. This process's CPU (process.cpuUsage: gateway + client, the
 * client's share the same on both sides) and bytes allocated (heap growth with no collection inside a
 * window: checked) per call.
 *
 *   BASE_TREE=/work/main [ROUNDS=8] [CALLS=1500] taskset -c 0 node --expose-gc --min-semi-space-size=128 \
 *     --max-semi-space-size=128 --import tsx loadtests/results/2026-11-28a-grpc17/front-miss-ab.ts
 */
import { toBinary } from '@bufbuild/protobuf';
import { connect, type ClientHttp2Session } from 'node:http2';
import { PerformanceObserver } from 'node:perf_hooks';
import { rm } from 'node:fs/promises';
import { ModelInferRequestSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import { frameGrpcMessage } from '../../../shared/src/grpc/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { loadGatewayConfig } from '../../../gateway/src/config/index.js';
import { sha256Hex } from '../../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../../gateway/src/entry-node.js';
import { simpleProto } from '../../../gateway/test/grpc-front/front-client.js';
import { spawnNode, writeTestRepository } from '../../../gateway/test/support/test-node-process.js';
import { UNLIMITED_TIER } from '../../src/scenarios/fleet-launch.js';

const base = process.env.BASE_TREE ?? '/work/main';
const ROUNDS = Number(process.env.ROUNDS ?? 8);
const CALLS = Number(process.env.CALLS ?? 1500);
const KEY = 'tsk_front-miss-ab';
const { startGateway: startBase } = (await import(`${base}/gateway/src/entry-node.ts`)) as { startGateway: typeof startGateway };
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
let collections = 0;
new PerformanceObserver((list) => void (collections += list.getEntries().length)).observe({ entryTypes: ['gc'] });

const repo = await writeTestRepository();
const node = await spawnNode(repo);
const configText = JSON.stringify({
  tiers: { premium: UNLIMITED_TIER },
  tenants: [{ id: 'ab', tier: 'premium', keys: [{ id: 'ab1', hash: await sha256Hex(KEY) }] }],
});
const options = (start: typeof startGateway) =>
  start({ config: loadGatewayConfig(configText), redisUrl: null, nodes: [{ id: 'n', grpc: `127.0.0.1:${node.grpcPort}`, http: null }], port: 0, grpcPort: 0, host: '127.0.0.1', logger: silentLogger });
const gateways: Record<'A' | 'B', RunningGateway> = { A: await options(startBase), B: await options(startGateway) };
const sessions: Record<'A' | 'B', ClientHttp2Session> = { A: connect(`http://${gateways.A.grpcTarget}`), B: connect(`http://${gateways.B.grpcTarget}`) };
const bodies = Array.from({ length: 64 }, (_, i) => frameGrpcMessage(toBinary(ModelInferRequestSchema, simpleProto(i, `r${i}`))));
const HEADERS = { ':method': 'POST', ':path': '/inference.GRPCInferenceService/ModelInfer', 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${KEY}`, 'cache-control': 'no-store', 'grpc-timeout': '10S' };

function call(session: ClientHttp2Session, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = session.request(HEADERS);
    let status: string | undefined;
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => void (bytes += chunk.length));
    stream.on('response', (h) => void (status ??= h['grpc-status'] === undefined ? undefined : `${String(h['grpc-status'])} ${String(h['grpc-message'])}`));
    stream.on('trailers', (t) => void (status = String(t['grpc-status'])));
    stream.on('error', reject);
    stream.on('close', () => (status === '0' && bytes > 5 ? resolve() : reject(new Error(`call failed: grpc-status ${status}`))));
    stream.end(body);
  });
}

async function window(side: 'A' | 'B', calls: number): Promise<{ cpu: number; bytes: number; clean: boolean }> {
  gc!();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const seen = collections;
  const heap0 = process.memoryUsage().heapUsed;
  const c0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) await call(sessions[side], bodies[i % 64]!);
  const c = process.cpuUsage(c0);
  const bytes = (process.memoryUsage().heapUsed - heap0) / calls;
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { cpu: (c.user + c.system) / calls, bytes, clean: collections === seen };
}

try {
  const results: Record<string, number[]> = { 'A cpu': [], 'B cpu': [], 'A bytes': [], 'B bytes': [] };
  let unclean = 0;
  await window('A', 300);
  await window('B', 300);
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of (round % 2 === 0 ? ['A', 'B'] : ['B', 'A']) as Array<'A' | 'B'>) {
      const r = await window(side, CALLS);
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
  console.log(`CPU per call (gateway + client): A median ${med(a).toFixed(1)} µs, B median ${med(b).toFixed(1)} µs, B/A per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, B lower in ${ratios.filter((r) => r < 1).length}/${ratios.length}`);
  console.log(`bytes allocated per call: A median ${med(results['A bytes']!).toFixed(0)}, B median ${med(results['B bytes']!).toFixed(0)} (windows with a collection inside, left out: ${unclean})`);
  console.log(JSON.stringify({ rounds: ROUNDS, calls: CALLS, results }));
} finally {
  for (const s of Object.values(sessions)) s.close();
  await gateways.A.close({ graceMs: 200 });
  await gateways.B.close({ graceMs: 200 });
  node.process.kill('SIGTERM');
  await node.exited;
  await rm(repo, { recursive: true, force: true });
}
