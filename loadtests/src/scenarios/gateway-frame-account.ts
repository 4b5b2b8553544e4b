/**
 * One gRPC miss against one HTTP miss at c=1, read off the wire (issue 17): the gateway's main-thread system calls
 * by kind, and per leg (client↔gateway, gateway↔node) its reads, writes, bytes and HTTP/2 frames by type, each per
 * request. The per-core stack (gateway-per-core-stack.ts), `simple` with `cache-control: no-store`; for each case the
 * misses are warmed up, then `strace -f -qq -yy -xx` follows the gateway over FRAME_N sequential misses.
 *
 *   BENCH_PORT_BASE=44000 [FRAME_N=300] [FRAME_WARMUP=1000] [FRAME_GC_N=5000] [FRAME_CASES=http,grpc] [FRAME_HITS=1] [FRAME_OUT=<dir>]
 *     [TESSERA_BUNDLE_DIR=<bundle>] node --import tsx loadtests/src/scenarios/gateway-frame-account.ts
 *
 * strace slows every call, so no times here: counts only. Needs strace with ptrace rights.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGrpcInferClient } from '../lib/clients/grpc-client.js';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import { sleep } from '../lib/load/load-window.js';
import { accountLegs, type LegPorts } from './gateway-frame-trace.js';
import { pinSelf, SIMPLE_REQUEST, startPerCoreStack } from './gateway-per-core-stack.js';

const N = Number(process.env.FRAME_N ?? 300);
/** Untraced misses over which the gateway's garbage collections are counted (from its /metrics). */
const GC_N = Number(process.env.FRAME_GC_N ?? 5000);
const WARMUP = Number(process.env.FRAME_WARMUP ?? 1000);
const CASES = (process.env.FRAME_CASES ?? 'http,grpc').split(',');
const TRACED = 'trace=read,write,writev,readv,recvfrom,sendto,sendmsg,recvmsg,epoll_wait,epoll_pwait,epoll_pwait2,epoll_ctl';
const log = (message: string): void => void process.stderr.write(`${message}\n`);

async function stopTracer(tracer: ChildProcess): Promise<void> {
  if (tracer.exitCode !== null) return;
  tracer.kill('SIGINT');
  await new Promise((resolve) => tracer.once('exit', resolve));
}

/** The gateway's collections by kind so far: count and seconds (prom-client's nodejs_gc_duration_seconds). */
async function gcTotals(port: number): Promise<Map<string, { count: number; seconds: number }>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const totals = new Map<string, { count: number; seconds: number }>();
  for (const m of text.matchAll(/^tessera_gateway_nodejs_gc_duration_seconds_(count|sum)\{kind="(\w+)"\} ([\d.e+-]+)$/gm)) {
    const t = totals.get(m[2]!) ?? { count: 0, seconds: 0 };
    if (m[1] === 'count') t.count = Number(m[3]);
    else t.seconds = Number(m[3]);
    totals.set(m[2]!, t);
  }
  return totals;
}

const per = (n: number): string => (n / N).toFixed(2);
const list = (m: Map<string, number>): string =>
  [...m].sort((a, b) => b[1] - a[1]).filter(([, n]) => n / N >= 0.005).map(([k, n]) => `${k} ${per(n)}`).join(', ') || '—';

async function main(): Promise<void> {
  pinSelf(1);
  const work = await mkdtemp(join(tmpdir(), 'gateway-frames-'));
  const stack = await startPerCoreStack(work, log);
  // FRAME_HITS=1: cache hits instead of misses (the first call stores the answer), to tell the front's part from the hop's.
  const headers = { authorization: `Bearer ${stack.key}`, ...(process.env.FRAME_HITS === '1' ? {} : { 'cache-control': 'no-store' }) };
  const http = createHttpInferClient('127.0.0.1', stack.gateway.port, 1, { headers });
  const grpc = createGrpcInferClient('127.0.0.1', stack.grpcPort, headers);
  const [pid] = await stack.gateway.pids();
  const ports: LegPorts = {
    grpcFront: stack.grpcPort,
    httpFront: stack.gateway.port,
    nodeGrpc: stack.node.grpcPort,
    nodeHttp: stack.node.httpPort,
    redis: Number(new URL((stack.gatewayConfig as { redisUrl: string }).redisUrl).port),
  };
  const lines: string[] = [`gateway: ${stack.gatewayBuild}; ${N} sequential misses per case; per miss`, ''];
  try {
    for (const kase of CASES) {
      const inner = kase === 'grpc' ? grpc : http;
      // A busy box can let the node's load report lapse for a moment (503 "no node is ready"): retried, counted.
      let failures = 0;
      const client = {
        infer: async (request: typeof SIMPLE_REQUEST): Promise<void> => {
          for (;;) {
            try {
              return void (await inner.infer(request));
            } catch (error) {
              if (++failures > 50) throw error;
              await sleep(200);
            }
          }
        },
      };
      for (let i = 0; i < WARMUP; i++) await client.infer(SIMPLE_REQUEST);
      const gcBefore = await gcTotals(stack.gateway.port);
      for (let i = 0; i < GC_N; i++) await client.infer(SIMPLE_REQUEST);
      const gcAfter = await gcTotals(stack.gateway.port);
      const gc = [...gcAfter].map(([kind, t]) => {
        const b = gcBefore.get(kind) ?? { count: 0, seconds: 0 };
        return `${kind} ${((t.count - b.count) / GC_N * 1000).toFixed(2)} per 1,000 misses, ${(((t.seconds - b.seconds) / GC_N) * 1e6).toFixed(1)} µs per miss`;
      });
      const file = join(work, `${kase}.strace`);
      const tracer = spawn('strace', ['-f', '-qq', '-yy', '-xx', '-s', '1048576', '-e', TRACED, '-o', file, '-p', String(pid)], { stdio: 'ignore' });
      await sleep(500);
      await writeFile(file, '');
      for (let i = 0; i < N; i++) await client.infer(SIMPLE_REQUEST);
      await sleep(50);
      await stopTracer(tracer);
      const text = await readFile(file, 'utf8');
      if (process.env.FRAME_OUT !== undefined) {
        await mkdir(process.env.FRAME_OUT, { recursive: true });
        await writeFile(join(process.env.FRAME_OUT, `${kase}.strace.txt`), text);
      }
      const { legs, calls } = accountLegs(text, ports, pid!);
      lines.push(`### ${kase} miss`, '', `collections over ${GC_N} untraced misses: ${gc.join('; ')}`, '', `failed calls retried: ${failures}`, '', `main thread system calls: ${list(calls)}`, '', '| leg | calls | bytes in / out | frames in | frames out |', '| --- | --- | --- | --- | --- |');
      for (const [name, leg] of [...legs].sort()) {
        const frames = (c: typeof leg.framesIn): string => (c === undefined ? '' : `${list(c.counts)}${c.broken ? ' (lost sync)' : ''}`);
        lines.push(`| ${name} | ${list(leg.calls)} | ${per(leg.bytes.in)} / ${per(leg.bytes.out)} | ${frames(leg.framesIn)} | ${frames(leg.framesOut)} |`);
      }
      lines.push('');
      log(lines.slice(-legs.size - 8).join('\n'));
    }
    const text = `${lines.join('\n')}\n`;
    process.stdout.write(text);
    if (process.env.FRAME_OUT !== undefined) await writeFile(join(process.env.FRAME_OUT, 'frame-account.md'), text);
  } finally {
    await http.close();
    await grpc.close();
    await stack.close();
    await rm(work, { recursive: true, force: true });
  }
}

await main();
