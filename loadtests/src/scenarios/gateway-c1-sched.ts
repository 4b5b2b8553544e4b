/**
 * The c=1 tail read with the kernel's scheduler trace. The per-core stack (gateway-per-core-stack.ts:
 * gateway alone on core 0; Redis, node and this load generator on core 1) plus nginx proxying to the
 * node's HTTP port, also on core 0. Each round runs `perf sched record -k mono` (system-wide, perf itself
 * on core 1) while SCHED_N `simple` misses go one at a time to the gateway, to nginx and to the node
 * directly (the order turns each round); every request keeps its start and end on CLOCK_MONOTONIC, the
 * trace's clock. Then each request is joined with the threads' timelines (gateway-c1-sched-join.ts):
 * how long the server's main thread ran, how long it was runnable but waiting for core 0 and who held
 * the core meanwhile, how long the node and the load generator ran and waited. The raw trace is deleted
 * once read; the per-request join and a `perf sched latency` extract stay.
 *
 *   BENCH_PORT_BASE=42000 [SCHED_N=1500] [SCHED_ROUNDS=3] [SCHED_OUT=<dir>] [SCHED_GATEWAY_FLAGS="..."] \
 *     node --import tsx loadtests/src/scenarios/gateway-c1-sched.ts
 *
 * The gateway starts with its image's node flags (GATEWAY_IMAGE_NODE_FLAGS) plus SCHED_GATEWAY_FLAGS;
 * TESSERA_BUNDLE_DIR picks the bundle. Needs root (or perf_event_paranoid -1) for the tracepoints.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { sleep } from '../lib/load/load-window.js';
import { pinSelf, SIMPLE_REQUEST, startNginx, startPerCoreStack } from './gateway-per-core-stack.js';
import { idleWakeTable, parseSchedScript, type SchedTrace } from './gateway-c1-sched-join.js';
import { addMarks, joinRequests, schedTable, type Roles, type TargetJoin } from './gateway-c1-sched-report.js';

const N = Number(process.env.SCHED_N ?? 1500);
const ROUNDS = Number(process.env.SCHED_ROUNDS ?? 3);
const OUT = process.env.SCHED_OUT;
/** Gateway requests before the first round: past TurboFan's warm-up at c=1. */
const WARMUP = Number(process.env.SCHED_WARMUP ?? 3000);
const log = (message: string): void => void process.stderr.write(`${message}\n`);
const nowNs = (): number => Number(process.hrtime.bigint());

const tidsOf = (pid: number): number[] => readdirSync(`/proc/${pid}/task`).map(Number);

/** The pid of the redis-server listening on `port` (the stack does not keep it). */
function redisPid(port: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (cmd.some((arg) => arg.includes('redis-server')) && cmd.some((arg) => arg === String(port) || arg.endsWith(`:${port}`))) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

async function timed(client: InferClient): Promise<[number, number][]> {
  const out: [number, number][] = [];
  let failed = 0;
  for (let i = 0; i < N; i++) {
    const t0 = nowNs();
    const ok = await client.infer(SIMPLE_REQUEST).then(() => true, () => false);
    const t1 = nowNs();
    if (ok) out.push([t0, t1]);
    else failed++;
  }
  if (failed > 0) log(`${failed} requests failed`);
  return out;
}

/** Starts `perf sched record` on core 1; resolves once the trace file is being written. */
async function startPerf(file: string): Promise<() => Promise<void>> {
  const child = spawn('taskset', ['-c', '1', 'perf', 'sched', 'record', '-k', 'mono', '-o', file, '--', 'sleep', '600'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await sleep(1500);
  if (child.exitCode !== null) throw new Error(`perf exited: ${stderr}`);
  return async () => {
    child.kill('SIGINT');
    await exited;
    log(stderr.trim().split('\n').slice(-1)[0] ?? '');
  };
}

async function readTrace(file: string, watched: ReadonlySet<number>): Promise<SchedTrace> {
  const perf = spawn('perf', ['script', '--ns', '-F', 'tid,cpu,time,event,trace', '-i', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  perf.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  perf.once('exit', () => {
    if (/lost/i.test(stderr)) log(`perf script: ${stderr.trim().split('\n').slice(0, 3).join(' / ')}`);
  });
  const lines = createInterface({ input: perf.stdout });
  const buffered: string[] = [];
  for await (const line of lines) if (line.includes('sched_switch') || line.includes('sched_waking') || line.includes('sched_wakeup_new') || line.includes('sched_stat_runtime')) buffered.push(line);
  // SCHED_KEEP_LINES=<file>: the trace lines kept as text, for reading by hand (large: short runs only).
  if (process.env.SCHED_KEEP_LINES !== undefined) await writeFile(process.env.SCHED_KEEP_LINES, `${buffered.join('\n')}\n`);
  return parseSchedScript(buffered, watched);
}

pinSelf(1);
const work = await mkdtemp(join(tmpdir(), 'gateway-sched-'));
// SCHED_PROBE=1: the tail probe (gateway-tail-probe.mjs) in the gateway, to name GCs and timer callbacks.
const probe = process.env.SCHED_PROBE === '1' ? fileURLToPath(new URL('./gateway-tail-probe.mjs', import.meta.url)) : undefined;
const probeOut = join(work, 'probe.json');
process.env.TAIL_PROBE_OUT = probeOut;
process.env.BENCH_GATEWAY_NODE_FLAGS = `${probe === undefined ? '' : `--import ${probe} `}${process.env.SCHED_GATEWAY_FLAGS ?? ''}`.trim();
const stack = await startPerCoreStack(work, log);
const nginx = await startNginx(work, stack.node.httpPort);
const targets: Record<string, TargetJoin[]> = { gateway: [], nginx: [], direct: [] };
const idleTables: string[] = [];
try {
  const [gatewayPid] = (await stack.gateway.pids()) as [number];
  const nginxWorker = (await nginx.pids())[1] as number;
  const redisPort = Number(new URL((stack.gatewayConfig as { redisUrl: string }).redisUrl).port);
  const redis = redisPid(redisPort);
  const auth = { authorization: `Bearer ${stack.key}`, 'cache-control': 'no-store' };
  const clients = {
    gateway: createHttpInferClient('127.0.0.1', stack.gateway.port, 1, { headers: auth }),
    nginx: createHttpInferClient('127.0.0.1', nginx.port, 1),
    direct: createHttpInferClient('127.0.0.1', stack.node.httpPort, 1),
  };
  for (let i = 0, failures = 0; i < WARMUP; i++) {
    await clients.gateway.infer(SIMPLE_REQUEST).catch(async (error: unknown) => {
      if (++failures > 100) throw error;
      await sleep(100);
    });
  }
  for (let i = 0; i < 300; i++) await clients.nginx.infer(SIMPLE_REQUEST);
  for (let i = 0; i < 300; i++) await clients.direct.infer(SIMPLE_REQUEST);
  const order: (keyof typeof clients)[] = ['gateway', 'nginx', 'direct'];
  for (let round = 0; round < ROUNDS; round++) {
    const roles: Roles = {
      gateway: tidsOf(gatewayPid),
      nginx: [nginxWorker],
      node: tidsOf(stack.node.pid),
      client: tidsOf(process.pid),
      redis: redis === undefined ? [] : tidsOf(redis),
      gatewayPid,
      nodePid: stack.node.pid,
      clientPid: process.pid,
    };
    const file = join(work, `round-${round}.data`);
    const stopPerf = await startPerf(file);
    const runs: Record<string, [number, number][]> = {};
    const turn = order.map((_, i) => order[(i + round) % order.length] as keyof typeof clients);
    try {
      for (const target of turn) runs[target] = await timed(clients[target]);
    } finally {
      await stopPerf();
    }
    const watched = new Set([...roles.gateway, ...roles.nginx, ...roles.node, ...roles.client, ...roles.redis]);
    const trace = await readTrace(file, watched);
    log(`round ${round + 1}/${ROUNDS} (${turn.join(', ')}): ${trace.events} sched events over ${((trace.lastNs - trace.firstNs) / 1e9).toFixed(1)} s`);
    for (const target of order) targets[target]?.push(joinRequests(trace, target, runs[target] ?? [], roles));
    idleTables.push(`Round ${round + 1}, wake-ups of our threads onto an idle core (the whole round):\n\n${idleWakeTable(trace.idleWakes)}`);
    if (OUT !== undefined) {
      await mkdir(OUT, { recursive: true });
      const latency = spawnSync('perf', ['sched', 'latency', '-i', file, '--sort', 'max'], { encoding: 'utf8', maxBuffer: 64 << 20 });
      await writeFile(join(OUT, `perf-sched-latency-round${round + 1}.txt`), `${latency.stdout.split('\n').slice(0, 40).join('\n')}\n`);
    }
    await rm(file, { force: true });
  }
  if (probe !== undefined) {
    process.kill(gatewayPid, 'SIGUSR2');
    let dump: { gc: [number, number, number][]; timers: [number, number][] } | undefined;
    for (let i = 0; i < 100 && dump === undefined; i++) {
      await sleep(100);
      dump = await readFile(probeOut, 'utf8').then((text) => JSON.parse(text) as typeof dump, () => undefined);
    }
    if (dump === undefined) throw new Error('the gateway wrote no probe dump');
    const marks = { gc: dump.gc.map(([start, ms]) => [start, ms * 1e6] as [number, number]), timers: dump.timers.map(([start, ns]) => [start, ns] as [number, number]) };
    for (const round of targets.gateway ?? []) addMarks(round, marks);
  }
  const text = `${schedTable(targets)}\n\n${idleTables.join('\n\n')}`;
  process.stdout.write(`${text}\n\n${N} requests per target per round, ${ROUNDS} rounds; gateway ${stack.gatewayBuild}; extra flags: ${process.env.BENCH_GATEWAY_NODE_FLAGS || '(none)'}\n`);
  if (OUT !== undefined) {
    await writeFile(join(OUT, 'sched-join.md'), `${text}\n`);
    if (process.env.SCHED_KEEP_LINES !== undefined) await writeFile(join(OUT, 'requests.json'), JSON.stringify(Object.fromEntries(Object.entries(targets).map(([k, v]) => [k, v.flatMap((r) => r.requests)]))));
    const slowest = Object.fromEntries(Object.entries(targets).map(([name, rounds]) => [name, rounds.flatMap((r) => r.requests).sort((a, b) => b.latencyNs - a.latencyNs).slice(0, 30)]));
    await writeFile(join(OUT, 'sched-join.json'), `${JSON.stringify({ n: N, rounds: ROUNDS, build: stack.gatewayBuild, flags: process.env.BENCH_GATEWAY_NODE_FLAGS, summary: Object.fromEntries(Object.entries(targets).map(([k, v]) => [k, v.map((r) => r.summary)])), slowest }, null, 1)}\n`);
  }
  for (const client of Object.values(clients)) await client.close();
} finally {
  await nginx.stop();
  await stack.close();
  await rm(work, { recursive: true, force: true });
}
