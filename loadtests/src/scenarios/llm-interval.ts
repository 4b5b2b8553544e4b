/**
 * `npm run bench -- llm-interval`: what the node's stream interval (stream_interval, issue 20) saves the
 * gateway and what it costs the client. One node serves the engine double as `llm_engine_i1`, `_i2`,
 * `_i4`, `_i8` (config `stream_interval` 1, 2, 4, 8; `stream_interval_ms` from LLM_INTERVAL_HOLD_MS,
 * default 200); one gateway (core 0, alone) relays them. At each concurrency the four models are
 * measured in turns (LLM_INTERVAL_ROUNDS rounds, default 2), so the box's load falls on each alike:
 * gateway CPU per token (from /proc/PID/task/*\/stat), TTFT and the gaps between events at the client.
 * Tokens are the stream's events, as in `llm` (64 per stream, 20 ms apart at the engine).
 * LLM_INTERVAL_LIST picks intervals (e.g. `1,8`); LLM_INTERVAL_AB=<bundleA>,<bundleB> starts one gateway per
 * production bundle (both on core 0, loaded in turns A, B inside each interval) for an A/B in one run; a bundle
 * written `<dir>@<n>` runs with `llm.nodeRawBelowStreams` n (the raw HTTP/1.1 upstream against HTTP/2, one build);
 * LLM_INTERVAL_CPU_PROF_DIR runs the gateway(s) with --cpu-prof there; LLM_INTERVAL_NODE_FLAGS adds Node flags
 * (e.g. `--perf-basic-prof` for `perf record -p PID`), LLM_INTERVAL_NODE_FLAGS_A / _B to one gateway of an A/B only
 * (a V8 flag against the same bundle without it).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runStreamLoad } from '../lib/clients/sse-stream-client.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, localDate } from '../lib/output/results-files.js';
import { formatTable } from '../lib/output/text-table.js';
import { perCoreSupport, perUnit, pinProcess, readThreadCpu, threadCpuDelta } from '../lib/per-core/index.js';
import { summarizeLatencies, type LatencySummary } from '../lib/sampling/percentiles.js';
import { benchKey, ProcessStack, waitForFleetSize } from './fleet-launch.js';
import { launchLlmBenchGateway } from './llm-bench-gateway.js';
import { startLlmBenchUpstream } from './llm-bench-upstream.js';

const INTERVALS = [1, 2, 4, 8] as const;
const TOKENS_PER_STREAM = 64;
const ITL_MS = 20;
const log = (message: string): void => void process.stderr.write(`[bench llm-interval] ${message}\n`);

interface IntervalPoint {
  /** The gateway's build ('A', 'B'), or '-' with one gateway. */
  readonly build: string;
  readonly concurrency: number;
  readonly interval: number;
  readonly round: number;
  readonly streams: number;
  readonly failedStreams: number;
  readonly tokensPerSec: number;
  readonly gatewayCpuUsPerToken: number;
  /** The same, the main thread alone and the rest (V8's GC and platform threads, libuv's pool). */
  readonly mainThreadUsPerToken: number;
  readonly helperThreadsUsPerToken: number;
  /** The gateway's read and write system calls per token (/proc/PID/io): load-independent. */
  readonly readCallsPerToken: number;
  readonly writeCallsPerToken: number;
  /** Reads of answer bytes at the client per token: about the gateway's writes per token. */
  readonly readsPerToken: number;
  readonly ttft: LatencySummary;
  readonly itl: LatencySummary;
}

/** Node flags for one gateway: LLM_INTERVAL_NODE_FLAGS_<build> added to the flags every gateway gets. */
function flagsFor(build: string, common: readonly string[] | undefined): { nodeFlags?: readonly string[] } {
  const own = process.env[`LLM_INTERVAL_NODE_FLAGS_${build}`]?.split(' ').filter((flag) => flag !== '') ?? [];
  const all = [...(common ?? []), ...own];
  return all.length === 0 ? {} : { nodeFlags: all };
}

/** Read and write system calls of a process so far (/proc/PID/io); zeros when it cannot be read. */
async function readSyscalls(pid: number): Promise<{ reads: number; writes: number }> {
  try {
    const text = await readFile(`/proc/${pid}/io`, 'utf8');
    const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return { reads: field('syscr'), writes: field('syscw') };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

const body = (interval: number): string =>
  JSON.stringify({ model: `llm_engine_i${interval}`, prompt: 'tell me a story about a gateway', stream: true, max_tokens: TOKENS_PER_STREAM });

export async function runLlmIntervalScenario(options: BenchOptions): Promise<number> {
  const concurrencies = options.concurrencies ?? [64, 16, 1];
  const rounds = Number(process.env.LLM_INTERVAL_ROUNDS ?? 2);
  const holdMs = Number(process.env.LLM_INTERVAL_HOLD_MS ?? 200);
  const intervals = process.env.LLM_INTERVAL_LIST === undefined ? INTERVALS : process.env.LLM_INTERVAL_LIST.split(',').map(Number).filter((n) => (INTERVALS as readonly number[]).includes(n));
  const bundles = process.env.LLM_INTERVAL_AB?.split(',');
  const profileDir = process.env.LLM_INTERVAL_CPU_PROF_DIR;
  const nodeFlags = process.env.LLM_INTERVAL_NODE_FLAGS?.split(' ').filter((flag) => flag !== '');
  const durationMs = options.durationS * 1000;
  const support = perCoreSupport();
  if (support.ok) pinProcess(process.pid, 1);
  else log(`not pinned: ${support.why}`);
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-llm-interval-'));
  const stack = new ProcessStack();
  const started = new Date();
  try {
    const models = Object.fromEntries(
      INTERVALS.map((n) => [`llm_engine_i${n}`, [`parameters { key: "stream_interval" value: { string_value: "${n}" } }`, `parameters { key: "stream_interval_ms" value: { string_value: "${holdMs}" } }`]]),
    );
    const { redisUrl } = await startLlmBenchUpstream(work, stack, 'llm-interval-node', Math.max(...concurrencies) + 8, ITL_MS, models);
    const { key, hash } = benchKey('llm-interval');
    const builds = bundles === undefined ? [{ build: '-', bundleDir: undefined }] : bundles.map((entry, i) => {
      const [bundleDir, rawBelow] = entry.split('@');
      return { build: String.fromCharCode(65 + i), bundleDir, ...(rawBelow === undefined ? {} : { rawBelowStreams: Number(rawBelow) }) };
    });
    const gateways = [];
    for (const { build, bundleDir, ...rest } of builds) {
      const gateway = await launchLlmBenchGateway({
        work, name: `interval-${build === '-' ? 'x' : build}`, redisUrl, keyHash: hash,
        ...(bundleDir === undefined ? {} : { bundleDir }), ...(profileDir === undefined ? {} : { profileDir }), ...rest,
        ...flagsFor(build, nodeFlags),
      });
      log(`gateway ${build} pid ${gateway.pid}`);
      stack.push(gateway);
      await waitForFleetSize(`http://127.0.0.1:${gateway.port}/metrics`, 1);
      if (support.ok) pinProcess(gateway.pid, 0);
      gateways.push({ build, gateway });
    }
    const headers = { authorization: `Bearer ${key}` };
    log('warm-up');
    for (const { gateway } of gateways) {
      for (const n of intervals) {
        await runStreamLoad({ port: gateway.port, path: '/v1/completions', body: body(n), headers, concurrency: 4, durationMs: Math.max(500, options.warmupS * 500) });
      }
    }
    const points: IntervalPoint[] = [];
    for (const concurrency of concurrencies) {
      for (let round = 1; round <= rounds; round++) {
        for (const interval of intervals) for (const { build, gateway } of gateways) {
          const before = await readThreadCpu(gateway.pid);
          const ioBefore = await readSyscalls(gateway.pid);
          const result = await runStreamLoad({ port: gateway.port, path: '/v1/completions', body: body(interval), headers, concurrency, durationMs });
          const cpu = perUnit(threadCpuDelta(before, await readThreadCpu(gateway.pid), gateway.pid), result.tokens);
          const ioAfter = await readSyscalls(gateway.pid);
          const point: IntervalPoint = {
            build,
            concurrency,
            interval,
            round,
            streams: result.streams,
            failedStreams: result.failedStreams,
            tokensPerSec: (result.tokens / result.elapsedMs) * 1000,
            gatewayCpuUsPerToken: cpu.totalUs,
            mainThreadUsPerToken: cpu.eventLoopUs,
            helperThreadsUsPerToken: cpu.helpersUs,
            readCallsPerToken: (ioAfter.reads - ioBefore.reads) / result.tokens,
            writeCallsPerToken: (ioAfter.writes - ioBefore.writes) / result.tokens,
            readsPerToken: result.reads / result.tokens,
            ttft: summarizeLatencies(result.ttftUs),
            itl: summarizeLatencies(result.itlUs),
          };
          points.push(point);
          log(`${build} c=${concurrency} interval ${interval} round ${round}: ${point.gatewayCpuUsPerToken.toFixed(1)} µs/token (main ${point.mainThreadUsPerToken.toFixed(1)}), ${point.writeCallsPerToken.toFixed(2)} writes/token, ${point.readsPerToken.toFixed(2)} reads/token, ${point.tokensPerSec.toFixed(0)} tok/s, failed ${point.failedStreams}`);
        }
      }
    }
    const ms = (us: number): string => (us / 1000).toFixed(2);
    const text = [
      `Stream interval through the gateway: ${TOKENS_PER_STREAM} events per stream, ${ITL_MS} ms apart at the engine, stream_interval_ms ${holdMs}; ${options.durationS} s per point, ${rounds} rounds in turns`,
      support.ok ? 'gateway alone on core 0; node, engine double, Redis and load generator on core 1' : `NOT pinned: ${support.why}`,
      '',
      formatTable(
        ['build', 'conc', 'interval', 'round', 'streams', 'failed', 'tok/s', 'gateway CPU µs/token', 'main thread', 'other threads', 'gateway reads/token', 'gateway writes/token', 'client reads/token', 'TTFT p50 ms', 'TTFT p99 ms', 'event gap p50 ms', 'event gap p99 ms'],
        points.map((p) => [p.build, String(p.concurrency), String(p.interval), String(p.round), String(p.streams), String(p.failedStreams), p.tokensPerSec.toFixed(0), p.gatewayCpuUsPerToken.toFixed(1), p.mainThreadUsPerToken.toFixed(1), p.helperThreadsUsPerToken.toFixed(1), p.readCallsPerToken.toFixed(2), p.writeCallsPerToken.toFixed(2), p.readsPerToken.toFixed(2), ms(p.ttft.p50Us), ms(p.ttft.p99Us), ms(p.itl.p50Us), ms(p.itl.p99Us)]),
      ),
      '',
    ].join('\n');
    process.stdout.write(text);
    const dir = join(options.outRoot ?? DEFAULT_RESULTS_ROOT, localDate(started));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'llm-interval.json'), `${JSON.stringify({ started: started.toISOString(), pinned: support.ok, bundles: bundles ?? null, holdMs, rounds, tokensPerStream: TOKENS_PER_STREAM, itlMs: ITL_MS, points }, null, 2)}\n`);
    await writeFile(join(dir, 'llm-interval.txt'), text);
    log(`results in ${dir}/llm-interval.{json,txt}`);
    return points.some((p) => p.failedStreams > 0) ? 1 : 0;
  } finally {
    await stack.close();
    await rm(work, { recursive: true, force: true });
  }
}
