/**
 * Where a gateway miss's time goes at concurrency 1, as a timeline of its system calls: the per-core
 * stack (gateway-per-core-stack.ts: gateway alone on core 0; Redis, node and this load generator on
 * core 1), one HTTP `simple` request at a time with `cache-control: no-store`, while `strace -f -ttt -yy`
 * records the gateway's socket reads, writes and event-loop waits. Each request's calls are placed
 * relative to the read of its request, by the socket they touched (client, upstream node, Redis), and
 * averaged over the requests: when the upstream call leaves and returns, when the answer is written,
 * how many loop wake-ups and Redis round trips lie on the path.
 *
 *   [TESSERA_BUNDLE_DIR=<bundle>] [TIMELINE_N=2000] [TIMELINE_OUT=<dir>] \
 *     node --import tsx loadtests/src/scenarios/gateway-c1-timeline.ts
 *
 * strace slows every system call it reports (tens of µs each): read offsets as an order and a count,
 * and compare builds under the same tracing; latency itself comes from the A/B or the per-core bench.
 * TIMELINE_KEEP=<file> keeps the raw trace. Needs strace and ptrace rights over the gateway; without them it says so and stops.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpInferClient } from '../lib/clients/http-client.js';
import { sleep } from '../lib/load/load-window.js';
import { pinSelf, SIMPLE_REQUEST, startPerCoreStack } from './gateway-per-core-stack.js';
import { parseStraceTimeline, timelineTable } from './strace-timeline.js';

const N = Number(process.env.TIMELINE_N ?? 2000);
const log = (message: string): void => void process.stderr.write(`${message}\n`);
const request = SIMPLE_REQUEST;

if (spawnSync('strace', ['-V']).status !== 0) {
  log('strace not installed: no timeline');
  process.exit(0);
}
pinSelf(1);
const work = await mkdtemp(join(tmpdir(), 'gateway-timeline-'));
const stack = await startPerCoreStack(work, log);
try {
  const auth = { authorization: `Bearer ${stack.key}`, 'cache-control': 'no-store' };
  const client = createHttpInferClient('127.0.0.1', stack.gateway.port, 1, { headers: auth });
  for (let i = 0; i < 200; i++) await client.infer(request);
  const [pid] = await stack.gateway.pids();
  const traceFile = join(work, 'gateway.strace');
  const tracer = spawn('strace', ['-f', '-ttt', '-yy', '-s', '0', '-o', traceFile, '-e', 'trace=read,write,writev,readv,recvfrom,sendto,recvmsg,sendmsg,epoll_wait,epoll_pwait', '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let straceErr = '';
  tracer.stderr.on('data', (chunk: Buffer) => void (straceErr += chunk.toString()));
  await sleep(1000);
  if (tracer.exitCode !== null) throw new Error(`strace could not attach: ${straceErr}`);
  const started = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await client.infer(request);
  const elapsedUs = Number(process.hrtime.bigint() - started) / 1000;
  tracer.kill('SIGINT');
  await new Promise((resolve) => tracer.once('exit', resolve));
  await client.close();
  const traceText = await readFile(traceFile, 'utf8');
  if (process.env.TIMELINE_KEEP !== undefined) await writeFile(process.env.TIMELINE_KEEP, traceText);
  const timeline = parseStraceTimeline(traceText, { gatewayPort: stack.gateway.port, upstreamPort: stack.node.grpcPort, mainTid: pid });
  const text = `${timelineTable(timeline)}\n\nclient-side mean under strace: ${(elapsedUs / N).toFixed(0)} µs per request (${N} requests, gateway ${stack.gatewayBuild})\n`;
  process.stdout.write(text);
  if (process.env.TIMELINE_OUT !== undefined) {
    await mkdir(process.env.TIMELINE_OUT, { recursive: true });
    await writeFile(join(process.env.TIMELINE_OUT, 'gateway-c1-timeline.json'), `${JSON.stringify({ n: N, build: stack.gatewayBuild, clientMeanUs: elapsedUs / N, timeline }, null, 2)}\n`);
    await writeFile(join(process.env.TIMELINE_OUT, 'gateway-c1-timeline.md'), text);
  }
} finally {
  await stack.close();
  await rm(work, { recursive: true, force: true });
}
