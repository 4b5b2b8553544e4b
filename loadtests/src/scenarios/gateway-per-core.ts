/**
 * `npm run bench -- gateway --per-core`: what the gateway costs per core (issue 17), the gateway alone
 * on core 0 and Redis, the node and the load generator on core 1, each figure next to an anchor run on
 * core 0 in the same run (before and after the gateway, so drift on the shared box shows):
 *
 *   cache hits   saturating closed loop: requests/s per core and CPU per hit vs bare Hono and bare node:http
 *   misses       open loop at one fixed rate: CPU per request vs nginx proxying the same requests
 *                to the same node; one request at a time: added p50/p99 (gateway - direct, nginx - direct)
 *   4 KB FP32    a 1024-element FP32 tensor each way vs `simple`, CPU per miss
 *   gRPC front   CPU per request through the gRPC front door vs HTTP, misses and hits, same rate
 *
 * Stack: gateway-per-core-stack.ts; points: gateway-per-core-points.ts; table and verdicts:
 * gateway-per-core-report.ts. nginx and wrk are optional (a one-line note when absent).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeInferRequestBody } from '../../../shared/src/kserve/index.js';
import type { InferRequest, Tensor } from '../../../shared/src/tensors/index.js';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, writeResults } from '../lib/output/results-files.js';
import { perCoreSupport } from '../lib/per-core/index.js';
import { floodPoint, idleShare, lessIdle, ratePoint, soloPoint, type FloodRequest, type MeasuredPoint, type PointTiming } from './gateway-per-core-points.js';
import { perCoreCsv, perCoreTable, perCoreTargets, type PerCoreFigures } from './gateway-per-core-report.js';
import { FP32_4K_REQUEST, FP32_ELEMENTS, OTHERS_CORE, SIMPLE, nginxAvailable, pinSelf, startAnchor, startNginx, startPerCoreStack, type MeasuredServer } from './gateway-per-core-stack.js';
import { machineInfo } from './scenario-output.js';

/** The fixed rate of the CPU-per-miss points: what core 1 (node, Redis, generator) sustains on a shared 2-core box. */
const MISS_RATE = 150;
const QUICK_MISS_RATE = 100;
const HOST = '127.0.0.1';

const log = (message: string): void => void process.stderr.write(`[bench gateway --per-core] ${message}\n`);

function int32(name: string, n: number): Tensor {
  return { name, datatype: 'INT32', shape: [1, n], data: new Uint8Array(Int32Array.from({ length: n }, (_, i) => i).buffer) };
}

const simpleRequest = (): InferRequest => ({ id: '', modelName: SIMPLE, inputs: [int32('INPUT0', 16), int32('INPUT1', 16)], parameters: {} });
// A new object per point: the clients cache a request's encoding per object.
const fp32Request = (): InferRequest => ({ ...FP32_4K_REQUEST });

/** One infer whose answer must carry `bytes` bytes in its first output: a wrong answer fails the point. */
function checked(client: InferClient, request: InferRequest, bytes: number): () => Promise<unknown> {
  return async () => {
    const result = await client.infer(request);
    const got = result.response.outputs[0]?.data.length;
    if (got !== bytes) throw new Error(`expected ${bytes} output bytes, got ${got}`);
  };
}

function floodRequest(request: InferRequest, headers: Record<string, string>): FloodRequest {
  const encoded = encodeInferRequestBody(request, { binaryInputs: true, binaryDataOutput: true });
  const body = typeof encoded.body === 'string' ? new TextEncoder().encode(encoded.body) : encoded.body;
  return { method: 'POST', path: `/v2/models/${request.modelName}/infer`, headers: { ...headers, ...encoded.headers }, body };
}

/** One POST of `request` (keep-alive through fetch's pool); a non-200 answer fails the point. */
async function postOnce(url: string, request: FloodRequest): Promise<void> {
  const response = await fetch(url, { method: request.method, headers: request.headers, body: request.body });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
}

async function withServer<T>(start: () => Promise<MeasuredServer>, use: (server: MeasuredServer) => Promise<T>): Promise<T> {
  const server = await start();
  try {
    return await use(server);
  } finally {
    await server.stop();
  }
}

export async function runGatewayPerCore(options: BenchOptions): Promise<number> {
  const support = perCoreSupport();
  if (!support.ok) {
    log(`skipped: ${support.why}`);
    return 0;
  }
  if (!pinSelf(OTHERS_CORE)) {
    log('skipped: this process could not be pinned to core 1');
    return 0;
  }
  const started = new Date();
  const t0 = performance.now();
  const timing: PointTiming = { warmupS: options.warmupS, durationS: options.durationS };
  const missRate = options.quick ? QUICK_MISS_RATE : MISS_RATE;
  const useWrk = spawnSync('wrk', ['--version']).error === undefined;
  const useNginx = nginxAvailable();
  const notes: string[] = [];
  if (!useWrk) notes.push('wrk is not installed: cache-hit floods use the project\'s http-flood (one worker thread), which may saturate before the server does.');
  if (!useNginx) notes.push('nginx is not installed: the miss anchor (nginx) is skipped.');
  for (const note of notes) log(note);
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-percore-'));
  const stack = await startPerCoreStack(work, log);
  const points: MeasuredPoint[] = [];
  const keep = (p: MeasuredPoint): MeasuredPoint => {
    points.push(p);
    log(`  ${p.label}: ${p.requestsPerSec.toFixed(0)} req/s, CPU ${p.cpuUsPerRequest.toFixed(1)} us/req (main thread ${p.mainThreadUsPerRequest.toFixed(1)}), ` +
      `${(p.coreShare * 100).toFixed(0)}% of core 0` + (p.latency ? `, p50 ${(p.latency.p50Us / 1000).toFixed(3)} ms p99 ${(p.latency.p99Us / 1000).toFixed(3)} ms` : '') +
      (p.errors > 0 ? `, ${p.errors} errors (${p.firstError})` : '') + (p.dropped > 0 ? `, ${p.dropped} dropped` : ''));
    return p;
  };
  const auth = { authorization: `Bearer ${stack.key}` };
  const noStore = { ...auth, 'cache-control': 'no-store' };
  const http = (port: number, headers: Record<string, string> = {}) => createHttpInferClient(HOST, port, 8, { headers });
  const clients: InferClient[] = [];
  const client = <C extends InferClient>(c: C): C => (clients.push(c), c);
  try {
    const gw = stack.gateway;
    const gwMiss = client(http(gw.port, noStore));
    const gwHit = client(http(gw.port, auth));
    const grpcMiss = client(createGrpcInferClient(HOST, stack.grpcPort, noStore));
    const grpcHit = client(createGrpcInferClient(HOST, stack.grpcPort, auth));
    const direct = client(http(stack.node.httpPort));
    const simple = simpleRequest();
    const fp32 = fp32Request();
    // Fill the cache (and check that a hit is a hit) before the hit points.
    await checked(gwHit, simple, 64)();
    const probe = await fetch(`http://${HOST}:${gw.port}/v2/models/${SIMPLE}/infer`, { method: 'POST', ...(() => {
      const r = floodRequest(simple, auth);
      return { headers: r.headers, body: r.body };
    })() });
    await probe.arrayBuffer();
    if (probe.headers.get('x-cache') !== 'HIT') throw new Error(`the gateway answered x-cache ${probe.headers.get('x-cache')} to a repeated request`);

    const idle = await idleShare(gw, timing.durationS);
    log(`gateway idle: ${(idle * 100).toFixed(1)}% of core 0 (subtracted in the net CPU column)`);
    const keepGw = (p: MeasuredPoint): MeasuredPoint => keep(lessIdle(p, idle));

    log('1/4 cache hits: saturating closed loop (32 connections), anchors before and after');
    const hitRequest = floodRequest(simple, auth);
    const anchorFlood = (label: string, kind: 'hono' | 'node-http') =>
      withServer(() => startAnchor(work, kind), (s) => floodPoint(label, work, s, hitRequest, timing, useWrk)).then(keep);
    await anchorFlood('bare Hono (before)', 'hono');
    await anchorFlood('bare node:http (before)', 'node-http');
    keepGw(await floodPoint('gateway cache hit (HTTP)', work, gw, hitRequest, timing, useWrk));
    // The work of a miss without the low-rate penalty (the node on core 1 bounds the rate it reaches).
    keepGw(await floodPoint('gateway miss flood (HTTP, no-store)', work, gw, floodRequest(simple, noStore), timing, useWrk));
    await anchorFlood('bare Hono (after)', 'hono');
    await anchorFlood('bare node:http (after)', 'node-http');

    log(`2/4 misses at ${missRate} req/s (open loop), nginx before and after`);
    const nginxPoint = async (label: string) =>
      useNginx ? keep(await withServer(() => startNginx(work, stack.node.httpPort), async (s) => {
        const c = http(s.port);
        try {
          return await ratePoint(label, checked(c, simple, 64), missRate, s, timing);
        } finally {
          await c.close();
        }
      })) : undefined;
    await nginxPoint('nginx proxy (before)');
    // What any Node server pays per request at this rate on this box: a request at 150 req/s runs
    // with cold caches (the core idles or runs others' work between requests), so bare node:http
    // costs several times its saturated CPU per request; the gateway's miss figure carries the same.
    keep(await withServer(() => startAnchor(work, 'node-http'), async (s) => {
      return await ratePoint(`bare node:http (${missRate} req/s)`, () => postOnce(`http://${HOST}:${s.port}${hitRequest.path}`, hitRequest), missRate, s, timing);
    }));
    keepGw(await ratePoint('gateway miss simple (HTTP)', checked(gwMiss, simple, 64), missRate, gw, timing));
    keepGw(await ratePoint('gateway miss simple (gRPC)', checked(grpcMiss, simple, 64), missRate, gw, timing));
    keepGw(await ratePoint('gateway miss 4 KB FP32 (HTTP)', checked(gwMiss, fp32, FP32_ELEMENTS * 4), missRate, gw, timing));
    keepGw(await ratePoint('gateway hit simple (HTTP, same rate)', checked(gwHit, simple, 64), missRate, gw, timing));
    keepGw(await ratePoint('gateway hit simple (gRPC, same rate)', checked(grpcHit, simple, 64), missRate, gw, timing));
    await nginxPoint('nginx proxy (after)');

    log('3/4 added latency: one request at a time');
    keep(await soloPoint('direct to the node (c=1)', checked(direct, simple, 64), undefined, timing));
    if (useNginx) {
      keep(await withServer(() => startNginx(work, stack.node.httpPort), async (s) => {
        const c = http(s.port);
        try {
          return await soloPoint('nginx proxy (c=1)', checked(c, simple, 64), s, timing);
        } finally {
          await c.close();
        }
      }));
    }
    keepGw(await soloPoint('gateway miss (HTTP, c=1)', checked(gwMiss, simple, 64), gw, timing));
    keepGw(await soloPoint('gateway miss (gRPC, c=1)', checked(grpcMiss, simple, 64), gw, timing));
    keep(await soloPoint('direct to the node (c=1, again)', checked(direct, simple, 64), undefined, timing));

    log('4/4 report');
    const figures: PerCoreFigures = { points, missRatePerSec: missRate, gatewayIdleShare: idle };
    const targets = perCoreTargets(figures);
    const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`;
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim();
    const elapsedS = (performance.now() - t0) / 1000;
    const json = {
      scenario: 'gateway --per-core',
      command,
      commit,
      startedAt: started.toISOString(),
      elapsedS,
      machine: machineInfo(),
      options: { ...timing, quick: options.quick },
      pinning: { gateway: 'core 0 (taskset -c 0), alone', anchors: 'core 0, one at a time', others: 'core 1: redis, node, load generator (this process, wrk)' },
      loadGenerator: useWrk ? 'wrk -t1 -c32 (hits); this process (open and closed loops)' : 'http-flood (1 thread, 32 connections); this process',
      gatewayBuild: stack.gatewayBuild,
      gatewayConfig: stack.gatewayConfig,
      figures,
      targets,
      notes: [
        ...notes,
        'CPU per request: user+system of every thread of the server (nginx: master and worker) from /proc/PID/task/*/stat, over the window, divided by the requests answered in it.',
        'requestsPerCoreSec = 1e6 / CPU us per request: what one fully used core would serve.',
        'netCpuUsPerRequest (gateway points): CPU per request less the gateway\'s idle share of a core (gatewayIdleShare, measured with no load), which weighs heavily at low rates; targets use it.',
        'Misses send Cache-Control: no-store (HTTP header or gRPC metadata). The gateway calls the node over gRPC (h2 transport); nginx and direct use the node\'s HTTP port.',
        'The box is shared with other work (other sessions); figures move with it: compare within a run.',
      ],
    };
    const paths = await writeResults(options.outRoot ?? DEFAULT_RESULTS_ROOT, 'gateway-per-core', started, json, perCoreCsv(figures));
    const table = perCoreTable(figures);
    const out = [`gateway --per-core (commit ${commit}): ${timing.warmupS} s warm-up + ${timing.durationS} s per point, ${elapsedS.toFixed(0)} s total`, `command: ${command}`, `gateway: ${stack.gatewayBuild}`, '', table, '', ...targets.map((t) => `${t.met ? 'MET    ' : 'MISSED '} ${t.name}: ${t.detail}`), '', `results: ${paths.json}`, `         ${paths.csv}`];
    process.stdout.write(`${out.join('\n')}\n`);
    const errors = points.reduce((n, p) => n + p.errors, 0);
    if (errors > 0) log(`${errors} requests failed; see firstError in the JSON`);
    return errors > 0 ? 1 : 0;
  } finally {
    for (const c of clients) await c.close();
    await stack.close();
    await rm(work, { recursive: true, force: true });
  }
}
