/**
 * What a cache miss costs the gateway at a low rate, thread by thread and system call by system call,
 * against nginx and a bare node:http server at the same rate (issue 17: at 150 req/s a miss costs ~4x
 * its saturated CPU, so most of it is what each wake-up of the process costs, not the miss's own work).
 *
 * The per-core stack (gateway-per-core-stack.ts: gateway, nginx and the anchor on core 0; Redis, node and
 * this load generator on core 1). For each server, and for each load (open loop at WAKE_RATE req/s, one
 * request at a time), two windows of WAKE_S seconds:
 *   1. untraced: per thread (by role: main, V8 workers, libuv pool, ...) CPU, runqueue wait, times on
 *      the CPU (wake-ups), voluntary and forced context switches, from /proc/PID/task/TID/{schedstat,status};
 *      Redis commands sent by the gateway (MONITOR, filtered by the gateway's sockets);
 *   2. under `strace -f -qq` (which slows every call: counts only): system calls by kind and thread.
 * Each divided by the requests answered in the window. Then the gateway idle for WAKE_IDLE_S seconds:
 * the same per second, and the Redis commands it sends with no traffic.
 *
 *   BENCH_PORT_BASE=42000 [WAKE_RATE=150] [WAKE_S=8] [WAKE_IDLE_S=10] [WAKE_WARMUP=3000] [WAKE_ONLY=gateway,nginx,node-http]
 *     [WAKE_GATEWAY=http-simple,http-4k,grpc-simple,grpc-4k] [WAKE_KEEP_STRACE=1]
 *     [WAKE_OUT=<dir>] [TESSERA_BUNDLE_DIR=<bundle>] node --import tsx loadtests/src/scenarios/gateway-wake-account.ts
 *
 * WAKE_GATEWAY picks the gateway's misses (default http-simple): HTTP binary or the gRPC front door, `simple`
 * or the 4 KB FP32 request, so a size's extra reads, writes or wake-ups show side by side. WAKE_IDLE_S=0 skips
 * the idle account; WAKE_KEEP_STRACE=1 keeps each traced window's strace text in WAKE_OUT (read sizes).
 *
 * Needs strace with ptrace rights (else the syscall columns are left out, with a note) and nginx (else skipped).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import type { InferClient } from '../lib/clients/infer-client.js';
import { createRawHttpPool, encodeRawRequest, hostHeader } from '../lib/clients/raw-http.js';
import { arrivalGaps } from '../lib/load/arrival-gaps.js';
import { startClosedLoad } from '../lib/load/closed-loop.js';
import { sleep, type RunningLoad } from '../lib/load/load-window.js';
import { startOpenLoad } from '../lib/load/open-loop.js';
import { summarizeLatencies } from '../lib/sampling/percentiles.js';
import { FP32_4K_REQUEST, nginxAvailable, pinSelf, SIMPLE_REQUEST, startAnchor, startNginx, startPerCoreStack, type MeasuredServer } from './gateway-per-core-stack.js';
import { countSyscalls, deltaByRole, nodeThreadRoles, parseSchedstat, syscallsPerUnit, type RoleDelta, type ThreadSched } from './gateway-wake-threads.js';

const RATE = Number(process.env.WAKE_RATE ?? 150);
const WINDOW_S = Number(process.env.WAKE_S ?? 8);
const IDLE_S = Number(process.env.WAKE_IDLE_S ?? 10);
/** Misses sent before the first window, so TurboFan has compiled the path (warm-up work is not a miss's). */
const WARMUP = Number(process.env.WAKE_WARMUP ?? 3000);
const ONLY = new Set((process.env.WAKE_ONLY ?? 'gateway,nginx,node-http').split(','));
const GATEWAY_CASES = (process.env.WAKE_GATEWAY ?? 'http-simple').split(',');
const KEEP_STRACE = process.env.WAKE_KEEP_STRACE === '1' && process.env.WAKE_OUT !== undefined;
const log = (message: string): void => void process.stderr.write(`${message}\n`);
const hasStrace = spawnSync('strace', ['-V']).status === 0;

async function readSched(pid: number): Promise<ThreadSched[]> {
  const tids = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  const read = async (tid: string): Promise<ThreadSched | undefined> => {
    try {
      const [schedstat, status] = await Promise.all([readFile(`/proc/${pid}/task/${tid}/schedstat`, 'utf8'), readFile(`/proc/${pid}/task/${tid}/status`, 'utf8')]);
      return parseSchedstat(Number(tid), schedstat, status);
    } catch {
      return undefined;
    }
  };
  return (await Promise.all(tids.map(read))).filter((t): t is ThreadSched => t !== undefined);
}

/** Role of a thread: Node's by rank; nginx's processes by pid (master, worker). */
async function rolesOf(server: MeasuredServer, kind: string): Promise<(tid: number) => string> {
  const pids = await server.pids();
  if (kind === 'nginx') return (tid) => (tid === pids[0] ? 'nginx master' : 'nginx worker');
  const tids = (await readdir(`/proc/${pids[0]}/task`)).map(Number);
  const roles = nodeThreadRoles(pids[0]!, tids);
  return (tid) => roles.get(tid) ?? 'other (born later)';
}

async function readAll(server: MeasuredServer): Promise<ThreadSched[]> {
  return (await Promise.all((await server.pids()).map(readSched))).flat();
}

/** Local ports of `pid`'s TCP sockets connected to `remotePort` (its Redis connections). */
async function socketsTo(pid: number, remotePort: number): Promise<Set<number>> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m !== null) inodes.add(m[1]!);
  }
  const ports = new Set<number>();
  const table = await readFile(`/proc/${pid}/net/tcp`, 'utf8');
  for (const line of table.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || !inodes.has(f[9]!)) continue;
    if (parseInt(f[2]!.split(':')[1]!, 16) === remotePort) ports.add(parseInt(f[1]!.split(':')[1]!, 16));
  }
  return ports;
}

/** Redis MONITOR over a window: commands by name sent from `ports`. */
function monitorRedis(redisPort: number, ports: Set<number>): { stop(): Promise<Record<string, number>> } {
  const child = spawn('redis-cli', ['-p', String(redisPort), 'monitor'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => void (text += chunk.toString()));
  return {
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
      const counts: Record<string, number> = {};
      for (const line of text.split('\n')) {
        const m = /^\d+\.\d+ \[\d+ [\d.]+:(\d+)\] "([^"]+)"/.exec(line);
        if (m === null || !ports.has(Number(m[1]))) continue;
        const name = m[2]!.toUpperCase();
        counts[name] = (counts[name] ?? 0) + 1;
      }
      return counts;
    },
  };
}

function startStrace(pids: number[], file: string): ChildProcess {
  return spawn('strace', ['-f', '-qq', '-o', file, ...pids.flatMap((pid) => ['-p', String(pid)])], { stdio: ['ignore', 'ignore', 'pipe'] });
}

async function stopStrace(tracer: ChildProcess): Promise<void> {
  if (tracer.exitCode === null) {
    tracer.kill('SIGINT');
    await new Promise((resolve) => tracer.once('exit', resolve));
  }
}

interface LoadResult {
  readonly requests: number;
  readonly errors: number;
  readonly windowS: number;
  readonly p50Us: number;
  readonly p99Us: number;
}

async function runWindow(load: RunningLoad, hooks: { start(): Promise<void>; end(): Promise<void> }): Promise<LoadResult> {
  try {
    await sleep(1000);
    const w = await load.measure(WINDOW_S * 1000, { onWindowStart: hooks.start, onWindowEnd: hooks.end });
    const lat = summarizeLatencies(w.latenciesUs);
    return { requests: w.latenciesUs.length + w.errors, errors: w.errors, windowS: w.windowS, p50Us: lat.p50Us, p99Us: lat.p99Us };
  } finally {
    await load.stop();
  }
}

interface Account {
  readonly server: string;
  readonly load: string;
  readonly requests: number;
  readonly errors: number;
  readonly p50Us: number;
  readonly p99Us: number;
  /** Per request, by thread role. */
  readonly perRequest: Record<string, RoleDelta>;
  readonly redisPerRequest?: Record<string, number>;
  /** Per request, by role and call, from the traced window (null without strace). */
  readonly syscallsPerRequest: Record<string, Record<string, number>> | null;
  readonly tracedRequests: number;
}

function divide(d: Record<string, RoleDelta>, n: number): Record<string, RoleDelta> {
  const out: Record<string, RoleDelta> = {};
  const r = (v: number): number => Math.round((v / n) * 100) / 100;
  for (const [role, v] of Object.entries(d)) out[role] = { threads: v.threads, cpuUs: r(v.cpuUs), waitUs: r(v.waitUs), slices: r(v.slices), voluntary: r(v.voluntary), nonvoluntary: r(v.nonvoluntary) };
  return out;
}

async function account(name: string, kind: string, server: MeasuredServer, loadName: string, makeLoad: () => RunningLoad, work: string, redis?: { port: number; gatewayPid: number }): Promise<Account> {
  const roleOf = await rolesOf(server, kind);
  let before: ThreadSched[] = [];
  let after: ThreadSched[] = [];
  let monitor: ReturnType<typeof monitorRedis> | undefined;
  let redisCounts: Record<string, number> | undefined;
  const ports = redis === undefined ? undefined : await socketsTo(redis.gatewayPid, redis.port);
  const plain = await runWindow(makeLoad(), {
    start: async () => {
      if (ports !== undefined) monitor = monitorRedis(redis!.port, ports);
      before = await readAll(server);
    },
    end: async () => {
      after = await readAll(server);
      redisCounts = await monitor?.stop();
    },
  });
  const perRequest = divide(deltaByRole(before, after, roleOf), plain.requests);
  let syscalls: Account['syscallsPerRequest'] = null;
  let traced = 0;
  if (hasStrace) {
    const file = join(work, `${name}-${loadName}.strace`.replace(/[^\w.-]/g, '_'));
    let tracer: ChildProcess | undefined;
    const pids = await server.pids();
    const t = await runWindow(makeLoad(), {
      start: async () => {
        tracer = startStrace(pids, file);
        await sleep(300);
        await writeFile(file, '');
      },
      end: async () => {
        if (tracer !== undefined) await stopStrace(tracer);
      },
    });
    traced = t.requests;
    syscalls = syscallsPerUnit(countSyscalls(await readFile(file, 'utf8').catch(() => '')), roleOf, t.requests);
    if (KEEP_STRACE) {
      await mkdir(process.env.WAKE_OUT!, { recursive: true });
      await writeFile(join(process.env.WAKE_OUT!, `${name}-${loadName}.strace.txt`.replace(/[^\w.-]/g, '_')), await readFile(file, 'utf8').catch(() => ''));
    }
    await rm(file, { force: true });
  }
  const result: Account = {
    server: name,
    load: loadName,
    requests: plain.requests,
    errors: plain.errors,
    p50Us: plain.p50Us,
    p99Us: plain.p99Us,
    perRequest,
    ...(redisCounts === undefined ? {} : { redisPerRequest: Object.fromEntries(Object.entries(redisCounts).map(([k, v]) => [k, Math.round((v / plain.requests) * 1000) / 1000])) }),
    syscallsPerRequest: syscalls,
    tracedRequests: traced,
  };
  log(`${name} ${loadName}: ${plain.requests} requests, p50 ${(plain.p50Us / 1000).toFixed(3)} ms; per request: ${Object.entries(perRequest).map(([r, v]) => `${r} ${v.cpuUs.toFixed(0)} µs/${v.slices.toFixed(2)} wakes`).join(', ')}`);
  return result;
}

async function idleAccount(server: MeasuredServer, work: string, redis: { port: number; gatewayPid: number }): Promise<Record<string, unknown>> {
  const roleOf = await rolesOf(server, 'node');
  const ports = await socketsTo(redis.gatewayPid, redis.port);
  const monitor = monitorRedis(redis.port, ports);
  const before = await readAll(server);
  const t0 = performance.now();
  await sleep(IDLE_S * 1000);
  const after = await readAll(server);
  const seconds = (performance.now() - t0) / 1000;
  const redisCounts = await monitor.stop();
  let syscalls: Record<string, Record<string, number>> | null = null;
  if (hasStrace) {
    const file = join(work, 'idle.strace');
    const tracer = startStrace(await server.pids(), file);
    await sleep(300);
    await writeFile(file, '');
    const s0 = performance.now();
    await sleep(IDLE_S * 1000);
    await stopStrace(tracer);
    syscalls = syscallsPerUnit(countSyscalls(await readFile(file, 'utf8')), roleOf, (performance.now() - s0) / 1000);
  }
  return {
    seconds,
    perSecond: divide(deltaByRole(before, after, roleOf), seconds),
    redisPerSecond: Object.fromEntries(Object.entries(redisCounts).map(([k, v]) => [k, Math.round((v / seconds) * 100) / 100])),
    syscallsPerSecond: syscalls,
  };
}

function table(accounts: readonly Account[]): string {
  const lines = ['| server, load | p50 ms | role | CPU µs | on-CPU stints (wake-ups) | voluntary cs | forced cs | runqueue wait µs |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
  for (const a of accounts) {
    for (const [role, v] of Object.entries(a.perRequest).sort((x, y) => y[1].cpuUs - x[1].cpuUs)) {
      if (v.cpuUs < 0.5 && v.slices < 0.005) continue;
      lines.push(`| ${a.server}, ${a.load} | ${(a.p50Us / 1000).toFixed(3)} | ${role} (${v.threads}) | ${v.cpuUs.toFixed(1)} | ${v.slices.toFixed(2)} | ${v.voluntary.toFixed(2)} | ${v.nonvoluntary.toFixed(2)} | ${v.waitUs.toFixed(1)} |`);
    }
  }
  lines.push('', '| server, load | role | system calls per request (traced window) |', '| --- | --- | --- |');
  for (const a of accounts) {
    for (const [role, calls] of Object.entries(a.syscallsPerRequest ?? {})) {
      const list = Object.entries(calls).filter(([, n]) => n >= 0.01).sort((x, y) => y[1] - x[1]).map(([c, n]) => `${c} ${n}`).join(', ');
      if (list !== '') lines.push(`| ${a.server}, ${a.load} | ${role} | ${list} |`);
    }
  }
  lines.push('', '| server, load | Redis commands per request |', '| --- | --- |');
  for (const a of accounts) if (a.redisPerRequest !== undefined) lines.push(`| ${a.server}, ${a.load} | ${Object.entries(a.redisPerRequest).map(([c, n]) => `${c} ${n}`).join(', ') || 'none'} |`);
  return lines.join('\n');
}

async function main(): Promise<void> {
  if (!pinSelf(1)) log('per-core pinning unavailable: figures are whole-box');
  if (!hasStrace) log('strace not installed: no system-call columns');
  const work = await mkdtemp(join(tmpdir(), 'gateway-wake-'));
  const stack = await startPerCoreStack(work, log);
  const servers: MeasuredServer[] = [];
  const clients: InferClient[] = [];
  const pools: { close(): void }[] = [];
  try {
    const redisPort = Number(new URL((stack.gatewayConfig as { redisUrl: string }).redisUrl).port);
    const [gatewayPid] = await stack.gateway.pids();
    const redis = { port: redisPort, gatewayPid: gatewayPid! };
    const accounts: Account[] = [];
    const loads = (call: () => Promise<unknown>): [string, () => RunningLoad][] => [
      [`${RATE}/s`, () => startOpenLoad({ nextGapMs: arrivalGaps('constant', RATE), maxOutstanding: 256, call: async () => void (await call()) })],
      ['c=1', () => startClosedLoad({ concurrency: 1, call: async () => void (await call()) })],
    ];
    if (ONLY.has('gateway')) {
      const noStore = { authorization: `Bearer ${stack.key}`, 'cache-control': 'no-store' };
      const http = createHttpInferClient('127.0.0.1', stack.gateway.port, 8, { headers: noStore });
      const grpc = createGrpcInferClient('127.0.0.1', stack.grpcPort, noStore);
      clients.push(http, grpc);
      for (const kase of GATEWAY_CASES) {
        const [protocol, size] = kase.split('-');
        const miss = protocol === 'grpc' ? grpc : http;
        const request = size === '4k' ? FP32_4K_REQUEST : SIMPLE_REQUEST;
        const label = `gateway miss (${protocol === 'grpc' ? 'gRPC' : 'HTTP'}${size === '4k' ? ', 4 KB FP32' : ''})`;
        // A busy box can let the node's load report lapse for a moment (503 "no node is ready"): retried.
        let warmupErrors = 0;
        for (let i = 0; i < WARMUP; i++) {
          await miss.infer(request).catch(async (error: unknown) => {
            if (++warmupErrors > 50) throw error;
            await sleep(200);
          });
        }
        for (const [loadName, make] of loads(() => miss.infer(request))) accounts.push(await account(label, 'node', stack.gateway, loadName, make, work, redis));
      }
    }
    if (ONLY.has('nginx') && nginxAvailable()) {
      const nginx = await startNginx(work, stack.node.httpPort);
      servers.push(nginx);
      const c = createHttpInferClient('127.0.0.1', nginx.port, 8);
      clients.push(c);
      for (const [loadName, make] of loads(() => c.infer(SIMPLE_REQUEST))) accounts.push(await account('nginx proxy', 'nginx', nginx, loadName, make, work));
    }
    if (ONLY.has('node-http')) {
      const anchor = await startAnchor(work, 'node-http');
      servers.push(anchor);
      const pool = createRawHttpPool({ host: '127.0.0.1', port: anchor.port, connections: 8 });
      pools.push(pool);
      const bytes = encodeRawRequest('POST', '/v2/models/simple/infer', hostHeader('127.0.0.1', anchor.port), { 'content-type': 'application/octet-stream' }, new Uint8Array(160));
      for (const [loadName, make] of loads(() => pool.request(bytes))) accounts.push(await account('bare node:http', 'node', anchor, loadName, make, work));
    }
    const idle = ONLY.has('gateway') && IDLE_S > 0 ? await idleAccount(stack.gateway, work, redis) : undefined;
    const text = `${table(accounts)}\n\ngateway idle, per second: ${JSON.stringify(idle, null, 1)}\n\ngateway: ${stack.gatewayBuild}\n`;
    process.stdout.write(text);
    if (process.env.WAKE_OUT !== undefined) {
      await mkdir(process.env.WAKE_OUT, { recursive: true });
      const report = { rate: RATE, windowS: WINDOW_S, idleS: IDLE_S, build: stack.gatewayBuild, strace: hasStrace, loadAverage: await readFile('/proc/loadavg', 'utf8'), accounts, idle };
      await writeFile(join(process.env.WAKE_OUT, 'gateway-wake-account.json'), `${JSON.stringify(report, null, 2)}\n`);
      await writeFile(join(process.env.WAKE_OUT, 'gateway-wake-account.md'), text);
    }
  } finally {
    for (const c of clients) await c.close();
    for (const p of pools) p.close();
    for (const s of servers) await s.stop();
    await stack.close();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
