/**
 * The gateway's p99 at concurrency 1, request by request: the per-core stack (gateway-per-core-stack.ts:
 * gateway alone on core 0; Redis, node and this load generator on core 1) and a bare node:http anchor on
 * core 0; in each round, TAIL_N `simple` misses one at a time (`cache-control: no-store`) to the gateway,
 * then the same to the node directly and to the anchor. Every request keeps its start and end on
 * CLOCK_MONOTONIC, and the gateway (with gateway-tail-probe.mjs loaded) keeps the same clock for its
 * own server time, GCs, timer callbacks and outgoing socket writes; between two gateway requests this
 * process reads /proc/<gw>/task/<tid>/schedstat, so each request also carries how long the gateway's
 * main thread waited for the core and how long its other threads ran. The slowest 1% and 2% are then
 * lined up against all of it (gateway-c1-tail-report.ts).
 *
 *   [TESSERA_BUNDLE_DIR=<bundle>] [TAIL_N=4000] [TAIL_ROUNDS=2] [TAIL_GATEWAY_FLAGS="--single-threaded-gc"] \
 *     [TAIL_OUT=<dir>] node --import tsx loadtests/src/scenarios/gateway-c1-tail.ts
 *
 * The gateway starts with its image's node flags (GATEWAY_IMAGE_NODE_FLAGS); BENCH_GATEWAY_V8_DEFAULTS=1
 * leaves them out. TAIL_PROBE_ALLOC=1 adds young-generation bytes per request, TAIL_PROBE_HEAP_SAMPLE=1|live
 * a sampling heap profile (with garbage / live only), TAIL_PROBE_STDOUT=<file> V8's traces (--trace-gc).
 *
 * The probe's wrappers add a few µs to every timer and request: compare runs of this scenario with each
 * other, not with `npm run bench -- gateway`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { sleep } from '../lib/load/load-window.js';
import { pinSelf, SIMPLE_REQUEST, startAnchor, startPerCoreStack } from './gateway-per-core-stack.js';
import { tailReport, tailTable, type ProbeDump, type TimedRequest } from './gateway-c1-tail-report.js';

const N = Number(process.env.TAIL_N ?? 4000);
const ROUNDS = Number(process.env.TAIL_ROUNDS ?? 2);
const log = (message: string): void => void process.stderr.write(`${message}\n`);
const nowNs = (): number => Number(process.hrtime.bigint());
/** Failed requests (a busy box can let the node's load report go stale): left out of the figures, counted here. */
const errors: { count: number; first?: string } = { count: 0 };

/** [run ns, runqueue wait ns] of every thread of `pid`, by tid. */
function schedstat(pid: number): Map<number, [number, number]> {
  const threads = new Map<number, [number, number]>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      threads.set(Number(tid), [run as number, wait as number]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return threads;
}

async function pass(client: InferClient, gatewayPid?: number): Promise<TimedRequest[]> {
  const timed: TimedRequest[] = [];
  let before = gatewayPid === undefined ? undefined : schedstat(gatewayPid);
  for (let i = 0; i < N; i++) {
    const t0 = nowNs();
    const failed = await client.infer(SIMPLE_REQUEST).then(() => false, (error: unknown) => {
      errors.count++;
      errors.first ??= String(error);
      return true;
    });
    const t1 = nowNs();
    if (failed) {
      before = gatewayPid === undefined ? undefined : schedstat(gatewayPid);
      continue;
    }
    if (gatewayPid === undefined || before === undefined) {
      timed.push({ startNs: t0, endNs: t1 });
      continue;
    }
    const after = schedstat(gatewayPid);
    let otherRunNs = 0;
    const otherByTid: Record<number, number> = {};
    for (const [tid, [run]] of after) {
      const ran = run - (before.get(tid)?.[0] ?? run);
      if (tid === gatewayPid || ran <= 0) continue;
      otherRunNs += ran;
      otherByTid[tid - gatewayPid] = ran;
    }
    const main = after.get(gatewayPid);
    const mainBefore = before.get(gatewayPid);
    const mainWaitNs = main !== undefined && mainBefore !== undefined ? main[1] - mainBefore[1] : 0;
    const mainRunNs = main !== undefined && mainBefore !== undefined ? main[0] - mainBefore[0] : 0;
    timed.push({ startNs: t0, endNs: t1, mainWaitNs, mainRunNs, otherRunNs, otherByTid });
    before = after;
  }
  return timed;
}

pinSelf(1);
const work = await mkdtemp(join(tmpdir(), 'gateway-tail-'));
const probe = fileURLToPath(new URL('./gateway-tail-probe.mjs', import.meta.url));
const probeOut = join(work, 'probe.json');
process.env.TAIL_PROBE_OUT = probeOut;
process.env.BENCH_GATEWAY_NODE_FLAGS = `--import ${probe} ${process.env.TAIL_GATEWAY_FLAGS ?? ''}`.trim();
const stack = await startPerCoreStack(work, log);
const anchor = await startAnchor(work, 'node-http');
try {
  const [gatewayPid] = await stack.gateway.pids();
  const auth = { authorization: `Bearer ${stack.key}`, 'cache-control': 'no-store' };
  const clients = {
    gateway: createHttpInferClient('127.0.0.1', stack.gateway.port, 1, { headers: auth }),
    direct: createHttpInferClient('127.0.0.1', stack.node.httpPort, 1),
    anchor: createHttpInferClient('127.0.0.1', anchor.port, 1),
  };
  // Warm-up; on a busy box the gateway may not see the node ready at once: wait for it.
  for (let i = 0, failures = 0; i < 500; i++) {
    await clients.gateway.infer(SIMPLE_REQUEST).catch(async (error: unknown) => {
      if (++failures > 100) throw error;
      await sleep(100);
    });
  }
  for (let i = 0; i < 200; i++) await clients.direct.infer(SIMPLE_REQUEST);
  const runs: { gateway: TimedRequest[]; direct: TimedRequest[]; anchor: TimedRequest[] }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const gateway = await pass(clients.gateway, gatewayPid);
    const direct = await pass(clients.direct);
    // The anchor answers a fixed body: its client sees a decode error, so time it raw.
    const anchorTimed: TimedRequest[] = [];
    for (let i = 0; i < N; i++) {
      const t0 = nowNs();
      await clients.anchor.infer(SIMPLE_REQUEST).catch(() => undefined);
      anchorTimed.push({ startNs: t0, endNs: nowNs() });
    }
    runs.push({ gateway, direct, anchor: anchorTimed });
    log(`round ${round + 1}/${ROUNDS} done`);
  }
  process.kill(gatewayPid as number, 'SIGUSR2');
  let dump: ProbeDump | undefined;
  for (let i = 0; i < 100 && dump === undefined; i++) {
    await sleep(100);
    dump = await readFile(probeOut, 'utf8').then((text) => JSON.parse(text) as ProbeDump, () => undefined);
  }
  if (dump === undefined) throw new Error('the gateway wrote no probe dump');
  const redisPort = Number(new URL((stack.gatewayConfig as { redisUrl: string }).redisUrl).port);
  const report = tailReport(runs, dump, { redisPort, upstreamPort: stack.node.grpcPort });
  const text = `${tailTable(report)}\n\n${N} requests per pass, ${ROUNDS} rounds, ${errors.count} failed${errors.first === undefined ? '' : ` (first: ${errors.first})`}; gateway ${stack.gatewayBuild}; flags: ${process.env.BENCH_GATEWAY_NODE_FLAGS}\n`;
  process.stdout.write(text);
  if (process.env.TAIL_OUT !== undefined) {
    await mkdir(process.env.TAIL_OUT, { recursive: true });
    await writeFile(join(process.env.TAIL_OUT, 'gateway-c1-tail.json'), `${JSON.stringify({ n: N, rounds: ROUNDS, errors, build: stack.gatewayBuild, flags: process.env.BENCH_GATEWAY_NODE_FLAGS, report }, null, 2)}\n`);
    await writeFile(join(process.env.TAIL_OUT, 'gateway-c1-tail.md'), text);
  }
  for (const client of Object.values(clients)) await client.close();
} finally {
  await anchor.stop();
  await stack.close();
  await rm(work, { recursive: true, force: true });
}
