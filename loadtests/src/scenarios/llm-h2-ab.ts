/**
 * `npm run bench -- llm-h2-ab`: the gateway's CPU per streamed token with the node's LLM routes reached
 * over HTTP/1.1 (one connection per stream, one read per event) against HTTP/2 (one session per node,
 * many streams' events per read), in the same run, interleaved.
 *
 * One node (serving its LLM routes on --llm-h2c-port too), the engine double, Redis and the load
 * generator on core 1; two gateways on core 0 from the same bundle, one with `llm.nodeHttp2: false`.
 * Each round measures both at every concurrency, the order alternating per round, so drift of the busy
 * box falls on both alike. CPU per token is net of each gateway's own idle cost, read from
 * /proc/PID/task/*\/stat. The bare node:http relay (the issue's anchor) runs before and after the rounds.
 * LLM_BENCH_AB_ROUNDS (default 4) sets the rounds; LLM_BENCH_CPU_PROF_DIR profiles the HTTP/2 gateway;
 * LLM_BENCH_AB_STAGGER=1 spreads the starts over one stream's length.
 * LLM_BENCH_AB_BASE_BUNDLE=<dir> compares builds instead: side `h1` is then a gateway from that bundle
 * (a base build, built with its build-info's builtAtMs pushed ahead) and both reach the node over HTTP/2.
 * LLM_BENCH_AB_H2_NODE_FLAGS (space-separated) are node/V8 flags for side `h2` alone (a V8 flag against the same build).
 * LLM_BENCH_AB_IDLE_AFTER_S=<s>: after each gateway point, that gateway's CPU over the next <s> seconds
 * with no stream (what it spends right after use: lease renewals kept warm, timers), per side and round.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runStreamLoad } from '../lib/clients/sse-stream-client.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, localDate } from '../lib/output/results-files.js';
import { formatTable } from '../lib/output/text-table.js';
import { perCoreSupport, perUnit, pinProcess, readThreadCpu, threadCpuDelta } from '../lib/per-core/index.js';
import { launchRelayAnchor } from '../lib/processes/llm-bench-servers.js';
import type { RunningServer } from '../lib/processes/server-process.js';
import { summarizeLatencies } from '../lib/sampling/percentiles.js';
import { benchKey, ProcessStack, waitForFleetSize } from './fleet-launch.js';
import { launchLlmBenchGateway } from './llm-bench-gateway.js';
import { startLlmBenchUpstream } from './llm-bench-upstream.js';

const TOKENS_PER_STREAM = 64;
const ITL_MS = 20;
const log = (message: string): void => void process.stderr.write(`[bench llm-h2-ab] ${message}\n`);

type Side = 'h1' | 'h2' | 'anchor';

interface AbPoint {
  readonly round: number;
  readonly side: Side;
  readonly concurrency: number;
  readonly tokens: number;
  readonly failedStreams: number;
  readonly tokensPerSec: number;
  readonly cpuUsPerToken: number;
  readonly netCpuUsPerToken: number;
  readonly ttftP50Ms: number;
  readonly itlP50Ms: number;
  /** CPU µs per second of the gateway in the idle spell right after this point (LLM_BENCH_AB_IDLE_AFTER_S). */
  readonly idleAfterUsPerSec?: number;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length === 0 ? NaN : sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export async function runLlmH2AbScenario(options: BenchOptions): Promise<number> {
  const concurrencies = options.concurrencies ?? (options.quick ? [16] : [16, 64]);
  const rounds = Number(process.env.LLM_BENCH_AB_ROUNDS ?? (options.quick ? 1 : 4));
  const durationMs = options.durationS * 1000;
  // LLM_BENCH_AB_STAGGER=1: starts spread over one stream's length (not a closed-loop burst), as the llm bench's `-staggered` points.
  const stagger = process.env.LLM_BENCH_AB_STAGGER === '1';
  const idleAfterMs = Number(process.env.LLM_BENCH_AB_IDLE_AFTER_S ?? 0) * 1000;
  const support = perCoreSupport();
  if (!support.ok) log(`not pinned: ${support.why}`);
  if (support.ok) pinProcess(process.pid, 1);
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-llm-h2-'));
  const stack = new ProcessStack();
  const started = new Date();
  try {
    const { redisUrl, node } = await startLlmBenchUpstream(work, stack, 'llm-ab-node', Math.max(...concurrencies) + 8, ITL_MS);
    const { key, hash } = benchKey('llm');
    const profileDir = process.env.LLM_BENCH_CPU_PROF_DIR;
    const baseBundle = process.env.LLM_BENCH_AB_BASE_BUNDLE;
    const h2NodeFlags = process.env.LLM_BENCH_AB_H2_NODE_FLAGS?.split(' ').filter((flag) => flag !== '');
    if (h2NodeFlags !== undefined) log(`h2 runs with ${h2NodeFlags.join(' ')}`);
    if (baseBundle !== undefined) log(`h1 is the base bundle ${baseBundle} over HTTP/2, h2 this build over HTTP/2`);
    // Each pushed as soon as it runs: a second one failing to start must not leave the first behind.
    const h1 = await launchLlmBenchGateway({ work, name: 'h1', redisUrl: redisUrl, keyHash: hash, ...(baseBundle === undefined ? { nodeHttp2: false } : { bundleDir: baseBundle }) });
    stack.push(h1);
    const h2 = await launchLlmBenchGateway({ work, name: 'h2', redisUrl: redisUrl, keyHash: hash, ...(profileDir === undefined ? {} : { profileDir }), ...(h2NodeFlags === undefined ? {} : { nodeFlags: h2NodeFlags }) });
    stack.push(h2);
    const gateways: Record<'h1' | 'h2', RunningServer> = { h1, h2 };
    for (const gateway of Object.values(gateways)) await waitForFleetSize(`http://127.0.0.1:${gateway.port}/metrics`, 1);
    const anchor = await launchRelayAnchor(work, node.httpPort);
    stack.push(anchor);
    if (support.ok) for (const pid of [gateways.h1.pid, gateways.h2.pid, anchor.pid]) pinProcess(pid, 0);
    const auth = { authorization: `Bearer ${key}` };
    const body = JSON.stringify({ model: 'llm_engine', prompt: 'tell me a story about a gateway', stream: true, max_tokens: TOKENS_PER_STREAM });
    for (const gateway of Object.values(gateways)) {
      await runStreamLoad({ port: gateway.port, path: '/v1/completions', body, headers: auth, concurrency: 16, durationMs: Math.max(1000, options.warmupS * 1000) });
    }

    // Each gateway's background with no stream, over the same window, once both are past the lease
    // keep-warm spell of their warm-up (5 s by default): subtracted from their points.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    const idleBefore = { h1: await readThreadCpu(gateways.h1.pid), h2: await readThreadCpu(gateways.h2.pid) };
    const idleStarted = performance.now();
    await new Promise((resolve) => setTimeout(resolve, durationMs));
    const idleSecs = (performance.now() - idleStarted) / 1000;
    const idleUsPerSec = {
      h1: threadCpuDelta(idleBefore.h1, await readThreadCpu(gateways.h1.pid), gateways.h1.pid).totalUs / idleSecs,
      h2: threadCpuDelta(idleBefore.h2, await readThreadCpu(gateways.h2.pid), gateways.h2.pid).totalUs / idleSecs,
    };
    log(`idle: h1 ${idleUsPerSec.h1.toFixed(0)}, h2 ${idleUsPerSec.h2.toFixed(0)} µs of CPU per second`);

    const points: AbPoint[] = [];
    const measure = async (round: number, side: Side, concurrency: number): Promise<void> => {
      const pid = side === 'anchor' ? anchor.pid : gateways[side].pid;
      const port = side === 'anchor' ? anchor.port : gateways[side].port;
      const before = await readThreadCpu(pid);
      const result = await runStreamLoad({ port, path: '/v1/completions', body, headers: side === 'anchor' ? {} : auth, concurrency, durationMs, staggerMs: stagger ? TOKENS_PER_STREAM * ITL_MS : 0 });
      const cpu = perUnit(threadCpuDelta(before, await readThreadCpu(pid), pid), result.tokens).totalUs;
      const tokensPerSec = (result.tokens / result.elapsedMs) * 1000;
      const idle = side === 'anchor' ? 0 : idleUsPerSec[side];
      let idleAfterUsPerSec: number | undefined;
      if (side !== 'anchor' && idleAfterMs > 0) {
        const idleBefore = await readThreadCpu(pid);
        const idleStarted = performance.now();
        await new Promise((resolve) => setTimeout(resolve, idleAfterMs));
        idleAfterUsPerSec = threadCpuDelta(idleBefore, await readThreadCpu(pid), pid).totalUs / ((performance.now() - idleStarted) / 1000);
      }
      const point: AbPoint = {
        round, side, concurrency, tokens: result.tokens, failedStreams: result.failedStreams, tokensPerSec,
        cpuUsPerToken: cpu, netCpuUsPerToken: cpu - idle / tokensPerSec,
        ttftP50Ms: summarizeLatencies(result.ttftUs).p50Us / 1000, itlP50Ms: summarizeLatencies(result.itlUs).p50Us / 1000,
        ...(idleAfterUsPerSec === undefined ? {} : { idleAfterUsPerSec }),
      };
      points.push(point);
      if (result.failedStreams > 0) log(`round ${round} c=${concurrency} ${side}: failures: ${result.failures.join('; ')}`);
      log(`round ${round} c=${concurrency} ${side}: ${tokensPerSec.toFixed(0)} tok/s, ${result.failedStreams} failed, CPU ${cpu.toFixed(1)} µs/token (net ${point.netCpuUsPerToken.toFixed(1)})${idleAfterUsPerSec === undefined ? '' : `, then idle ${idleAfterUsPerSec.toFixed(0)} µs/s`}`);
    };

    for (const c of concurrencies) await measure(0, 'anchor', c);
    for (let round = 1; round <= rounds; round++) {
      const order: ('h1' | 'h2')[] = round % 2 === 1 ? ['h1', 'h2'] : ['h2', 'h1'];
      for (const c of concurrencies) for (const side of order) await measure(round, side, c);
    }
    for (const c of concurrencies) await measure(rounds + 1, 'anchor', c);

    const summary = concurrencies.map((c) => {
      const net = (side: Side) => points.filter((p) => p.side === side && p.concurrency === c).map((p) => p.netCpuUsPerToken);
      const h1 = net('h1');
      const h2 = net('h2');
      // Rounds won by gross CPU: the idle figures subtracted for "net" move by more than the difference on a busy box.
      const grossOf = (side: Side) => points.filter((p) => p.side === side && p.concurrency === c).map((p) => p.cpuUsPerToken);
      const h1Gross = grossOf('h1');
      const h2Gross = grossOf('h2');
      const wins = h1Gross.filter((v, i) => h2Gross[i] !== undefined && h2Gross[i]! < v).length;
      const gross = (side: Side) => median(points.filter((p) => p.side === side && p.concurrency === c).map((p) => p.cpuUsPerToken));
      const idleAfter = (side: Side) => median(points.filter((p) => p.side === side && p.concurrency === c && p.idleAfterUsPerSec !== undefined).map((p) => p.idleAfterUsPerSec!));
      return { concurrency: c, h1NetMedian: median(h1), h2NetMedian: median(h2), h1GrossMedian: gross('h1'), h2GrossMedian: gross('h2'), h2CheaperGross: `${wins} of ${Math.min(h1Gross.length, h2Gross.length)}`, anchorMedian: median(net('anchor')), h1IdleAfterMedian: idleAfter('h1'), h2IdleAfterMedian: idleAfter('h2'), h1Rounds: h1, h2Rounds: h2 };
    });
    const text = [
      `LLM streams through the gateway, ${baseBundle === undefined ? 'node reached over HTTP/1.1 vs HTTP/2' : `base bundle ${baseBundle} (h1) vs this build (h2), both over HTTP/2`}${stagger ? ', starts staggered' : ''}, ${rounds} interleaved rounds of ${options.durationS} s per point, ${TOKENS_PER_STREAM} tokens per stream ${ITL_MS} ms apart`,
      support.ok ? 'both gateways and the anchor on core 0 (one measured at a time); node, engine double, Redis and load generator on core 1' : `NOT pinned: ${support.why}`,
      `gateway idle: h1 ${idleUsPerSec.h1.toFixed(0)}, h2 ${idleUsPerSec.h2.toFixed(0)} µs of CPU per second`,
      '',
      formatTable(
        ['round', 'side', 'conc', 'tok/s', 'failed', 'CPU µs/token', 'net of idle', 'TTFT p50 ms', 'ITL p50 ms', 'idle after, µs/s'],
        points.map((p) => [String(p.round), p.side, String(p.concurrency), p.tokensPerSec.toFixed(0), String(p.failedStreams), p.cpuUsPerToken.toFixed(1), p.netCpuUsPerToken.toFixed(1), p.ttftP50Ms.toFixed(2), p.itlP50Ms.toFixed(2), p.idleAfterUsPerSec === undefined ? '-' : p.idleAfterUsPerSec.toFixed(0)]),
      ),
      '',
      formatTable(
        ['conc', 'HTTP/1.1 net µs/token (median)', 'HTTP/2 net µs/token (median)', 'h2 / h1', 'gross h1 / h2', 'h2 cheaper (gross) in', 'bare relay µs/token', 'idle after h1 / h2, µs/s (median)'],
        summary.map((s) => [String(s.concurrency), s.h1NetMedian.toFixed(1), s.h2NetMedian.toFixed(1), (s.h2NetMedian / s.h1NetMedian).toFixed(2), `${s.h1GrossMedian.toFixed(1)} / ${s.h2GrossMedian.toFixed(1)}`, s.h2CheaperGross, s.anchorMedian.toFixed(1), Number.isNaN(s.h1IdleAfterMedian) ? '-' : `${s.h1IdleAfterMedian.toFixed(0)} / ${s.h2IdleAfterMedian.toFixed(0)}`]),
      ),
      '',
    ].join('\n');
    process.stdout.write(text);
    const dir = join(options.outRoot ?? DEFAULT_RESULTS_ROOT, localDate(started));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'llm-h2-ab.json'), `${JSON.stringify({ started: started.toISOString(), command: `${idleAfterMs > 0 ? `LLM_BENCH_AB_IDLE_AFTER_S=${idleAfterMs / 1000} ` : ''}npm run bench -- llm-h2-ab ${process.argv.slice(3).join(' ')}`.trim(), baseBundle, h2NodeFlags, rounds, pinned: support.ok, idleUsPerSec, points, summary }, null, 2)}\n`);
    await writeFile(join(dir, 'llm-h2-ab.txt'), text);
    log(`results in ${dir}/llm-h2-ab.{json,txt}`);
    return points.some((p) => p.side !== 'anchor' && p.failedStreams > 0) ? 1 : 0;
  } finally {
    await stack.close();
    await rm(work, { recursive: true, force: true });
  }
}
