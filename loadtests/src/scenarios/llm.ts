/**
 * `npm run bench -- llm`: LLM streaming through the gateway (issue 20).
 *
 *   load generator (this process) ──▶ gateway (core 0, alone) ──▶ node ──▶ engine double
 *                                 └──▶ bare relay anchor (core 0) ──▶ node      (the floor)
 *                                 └──▶ nginx (core 0, proxy_buffering off) ──▶ node   (a real proxy)
 *                                 └──▶ write floor (core 0): the node's events, no upstream (the kernel's share)
 *                                 └──────────────────────────────────▶ node      (direct)
 * The node serves `llm_engine` (backend "openai") over an OpenAI-compatible engine double that streams
 * 64 one-token chunks 20 ms apart; node, engine, Redis and the load generator share core 1. At each
 * concurrency (closed loop of streamed `/v1/completions`): direct to the node, the anchor, the
 * gateway (a tenant key, rate and token limits on through Redis), the anchor again. Measured: time to
 * first token and inter-token latency p50/p99, tokens/s, and CPU per streamed token of the process on
 * core 0 from /proc/PID/task/*\/stat. Targets: gateway CPU per token <= 20 µs; first-token latency the
 * gateway adds over direct, p50, <= 1 ms.
 *
 * The closed loop's streams are all as long, so its clients start together and restart together: its
 * TTFT is a burst's. At 16 and 64 streams, direct and the gateway run once more with starts staggered
 * over one stream's length (`-staggered`), and each point records how busy core 1 was: the added
 * first-token latency of a burst on a saturated core 1 is mostly queueing there, not the gateway.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runStreamLoad, type StreamLoadResult } from '../lib/clients/sse-stream-client.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, localDate } from '../lib/output/results-files.js';
import { formatTable } from '../lib/output/text-table.js';
import { perCoreSupport, perUnit, pinProcess, readThreadCpu, threadCpuDelta, type CpuSplit } from '../lib/per-core/index.js';
import { launchRelayAnchor } from '../lib/processes/llm-bench-servers.js';
import { launchWriteFloor, nginxAvailable, readUserSys, splitEvents, startSseNginx, type LlmAnchor, type UserSys } from '../lib/processes/llm-floor-anchors.js';
import { summarizeLatencies, type LatencySummary } from '../lib/sampling/percentiles.js';
import { coreBusyShare, readCoreTicks } from './llm-core-busy.js';
import { benchKey, ProcessStack, waitForFleetSize } from './fleet-launch.js';
import { launchLlmBenchGateway } from './llm-bench-gateway.js';
import { startLlmBenchUpstream } from './llm-bench-upstream.js';

const DEFAULT_CONCURRENCIES = [1, 16, 64];
const TOKENS_PER_STREAM = 64;
const ITL_MS = 20;
const CPU_TARGET_US = 20;
const TTFT_TARGET_MS = 1;
const STREAM_BODY = JSON.stringify({ model: 'llm_engine', prompt: 'tell me a story about a gateway', stream: true, max_tokens: TOKENS_PER_STREAM });

const log = (message: string): void => void process.stderr.write(`[bench llm] ${message}\n`);

type Target = 'direct' | 'anchor-before' | 'gateway' | 'gateway-h1' | 'anchor-after' | 'nginx' | 'write-floor' | 'direct-staggered' | 'gateway-staggered';

interface Point {
  readonly concurrency: number;
  readonly target: Target;
  readonly streams: number;
  readonly failedStreams: number;
  readonly failures?: readonly string[];
  readonly tokensPerSec: number;
  readonly ttft: LatencySummary;
  /** TTFT of the first stream of each client: a burst of starts after an idle spell (leases cold or kept warm). */
  readonly firstTtft: LatencySummary;
  readonly itl: LatencySummary;
  /** CPU of the process on core 0 per streamed token (not for `direct`, nginx or the floor). */
  readonly cpuPerToken?: CpuSplit;
  /** The same split into user and kernel time (every process on core 0 the point measures: nginx's master and worker). */
  readonly userSysPerToken?: UserSys;
  /** Share of the window core 1 (node, engine, Redis, load generator) was busy, where known. */
  readonly core1Busy?: number;
}

async function measure(target: Target, concurrency: number, port: number, headers: Record<string, string>, durationMs: number, pid?: number, extraPids: readonly number[] = []): Promise<Point> {
  const measured = pid === undefined ? [] : [pid, ...extraPids];
  const before = pid === undefined ? [] : await readThreadCpu(pid);
  const userSysBefore = await readUserSys(measured);
  const core1Before = readCoreTicks(1);
  const result: StreamLoadResult = await runStreamLoad({
    port,
    path: '/v1/completions',
    body: STREAM_BODY,
    headers,
    concurrency,
    durationMs,
    staggerMs: target.endsWith('-staggered') ? TOKENS_PER_STREAM * ITL_MS : 0,
  });
  const core1Busy = coreBusyShare(core1Before, readCoreTicks(1));
  const userSysAfter = await readUserSys(measured);
  const cpu = pid === undefined || extraPids.length > 0 ? undefined : perUnit(threadCpuDelta(before, await readThreadCpu(pid), pid), result.tokens);
  const userSys = pid === undefined ? undefined : { userUs: (userSysAfter.userUs - userSysBefore.userUs) / result.tokens, sysUs: (userSysAfter.sysUs - userSysBefore.sysUs) / result.tokens };
  const point: Point = {
    concurrency,
    target,
    streams: result.streams,
    failedStreams: result.failedStreams,
    ...(result.failures.length > 0 ? { failures: result.failures } : {}),
    tokensPerSec: (result.tokens / result.elapsedMs) * 1000,
    ttft: summarizeLatencies(result.ttftUs),
    firstTtft: summarizeLatencies(result.firstTtftUs),
    itl: summarizeLatencies(result.itlUs),
    ...(cpu === undefined ? {} : { cpuPerToken: cpu }),
    ...(userSys === undefined ? {} : { userSysPerToken: userSys }),
    ...(core1Busy === undefined ? {} : { core1Busy }),
  };
  log(
    `c=${concurrency} ${target}: ${point.streams} streams (${point.failedStreams} failed), ${point.tokensPerSec.toFixed(0)} tok/s, ` +
      `TTFT p50 ${(point.ttft.p50Us / 1000).toFixed(2)} ms, ITL p50 ${(point.itl.p50Us / 1000).toFixed(2)} ms` +
      (userSys === undefined ? '' : `, CPU ${(userSys.userUs + userSys.sysUs).toFixed(1)} µs/token (user ${userSys.userUs.toFixed(1)}, sys ${userSys.sysUs.toFixed(1)})`) +
      (core1Busy === undefined ? '' : `, core 1 ${(core1Busy * 100).toFixed(0)}% busy`),
  );
  return point;
}

const ms = (us: number): string => (Number.isFinite(us) ? (us / 1000).toFixed(2) : '-');

function table(points: readonly Point[]): string {
  return formatTable(
    ['conc', 'target', 'streams', 'failed', 'tok/s', 'TTFT p50 ms', 'TTFT p99 ms', 'first starts TTFT p50 / max ms', 'ITL p50 ms', 'ITL p99 ms', 'CPU µs/token', 'user / sys µs/token', 'event loop µs/token', 'core 1 busy'],
    points.map((p) => [
      String(p.concurrency),
      p.target,
      String(p.streams),
      String(p.failedStreams),
      p.tokensPerSec.toFixed(0),
      ms(p.ttft.p50Us),
      ms(p.ttft.p99Us),
      `${ms(p.firstTtft.p50Us)} / ${ms(p.firstTtft.maxUs)}`,
      ms(p.itl.p50Us),
      ms(p.itl.p99Us),
      p.cpuPerToken !== undefined ? p.cpuPerToken.totalUs.toFixed(1) : p.userSysPerToken !== undefined ? (p.userSysPerToken.userUs + p.userSysPerToken.sysUs).toFixed(1) : '-',
      p.userSysPerToken === undefined ? '-' : `${p.userSysPerToken.userUs.toFixed(1)} / ${p.userSysPerToken.sysUs.toFixed(1)}`,
      p.cpuPerToken === undefined ? '-' : p.cpuPerToken.eventLoopUs.toFixed(1),
      p.core1Busy === undefined ? '-' : `${(p.core1Busy * 100).toFixed(0)}%`,
    ]),
  );
}

export async function runLlmScenario(options: BenchOptions): Promise<number> {
  const concurrencies = options.concurrencies ?? (options.quick ? [1, 16] : DEFAULT_CONCURRENCIES);
  const durationMs = options.durationS * 1000;
  const support = perCoreSupport();
  if (!support.ok) log(`not pinned: ${support.why}`);
  // Everything this process starts inherits core 1; the gateway and the anchor are moved to core 0.
  if (support.ok) pinProcess(process.pid, 1);
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-llm-'));
  const stack = new ProcessStack();
  const started = new Date();
  try {
    // The node serves its LLM routes over HTTP/2 too: `gateway` reaches it so (the default), `gateway-h1` over HTTP/1.1.
    const { redisUrl, node } = await startLlmBenchUpstream(work, stack, 'llm-bench-node', Math.max(...concurrencies) + 8, ITL_MS);
    const { key, hash } = benchKey('llm');
    // LLM_BENCH_CPU_PROF_DIR=<dir>: the gateway runs with --cpu-prof (a .cpuprofile there when it stops).
    const profileDir = process.env.LLM_BENCH_CPU_PROF_DIR;
    // LLM_BENCH_KEEP_WARM_MS=0: leases expire when idle (the gateway before renewal ahead of time).
    const keepWarm = process.env.LLM_BENCH_KEEP_WARM_MS;
    const gateway = await launchLlmBenchGateway({
      work,
      name: 'bench',
      redisUrl: redisUrl,
      keyHash: hash,
      ...(keepWarm === undefined ? {} : { keepWarmMs: Number(keepWarm) }),
      ...(profileDir === undefined ? {} : { profileDir }),
    });
    stack.push(gateway); // before the next start, which may fail
    const gatewayH1 = await launchLlmBenchGateway({ work, name: 'bench-h1', redisUrl: redisUrl, keyHash: hash, nodeHttp2: false, ...(keepWarm === undefined ? {} : { keepWarmMs: Number(keepWarm) }) });
    stack.push(gatewayH1);
    await waitForFleetSize(`http://127.0.0.1:${gateway.port}/metrics`, 1);
    await waitForFleetSize(`http://127.0.0.1:${gatewayH1.port}/metrics`, 1);
    const anchor = await launchRelayAnchor(work, node.httpPort);
    stack.push(anchor);
    if (support.ok) {
      pinProcess(gateway.pid, 0);
      pinProcess(gatewayH1.pid, 0);
      pinProcess(anchor.pid, 0);
    }
    // nginx is on this box but not on a fresh machine: its points are left out with a note when absent.
    let nginx: LlmAnchor | undefined;
    if (nginxAvailable()) {
      nginx = await startSseNginx(work, 0, node.httpPort);
      stack.push({ stop: () => nginx!.stop() });
    } else log('nginx not installed: its points are left out');
    // The floor replays the node's own events for this request, captured from one direct stream.
    const directBody = await fetch(`${node.httpBase}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: STREAM_BODY }).then((r) => r.text());
    const floor = await launchWriteFloor(work, 0, splitEvents(directBody), ITL_MS);
    stack.push(floor);
    const auth = { authorization: `Bearer ${key}` };
    log('warm-up');
    for (const port of [gatewayH1.port, gateway.port]) {
      await runStreamLoad({ port, path: '/v1/completions', body: JSON.stringify({ model: 'llm_engine', prompt: 'warm', stream: true, max_tokens: 8 }), headers: auth, concurrency: 4, durationMs: Math.max(500, options.warmupS * 1000) });
    }

    // The gateway's own background (fleet refresh, Redis, timers) with no stream: subtracted below, so
    // CPU per token at low load is not mostly the idle cost spread over few tokens.
    const idleBefore = await readThreadCpu(gateway.pid);
    const idleStarted = performance.now();
    await new Promise((resolve) => setTimeout(resolve, durationMs));
    const idleUsPerSec = threadCpuDelta(idleBefore, await readThreadCpu(gateway.pid), gateway.pid).totalUs / ((performance.now() - idleStarted) / 1000);
    log(`gateway idle: ${idleUsPerSec.toFixed(0)} µs of CPU per second`);

    const points: Point[] = [];
    for (const c of concurrencies) {
      points.push(await measure('direct', c, node.httpPort, {}, durationMs));
      points.push(await measure('anchor-before', c, anchor.port, {}, durationMs, anchor.pid));
      points.push(await measure('gateway', c, gateway.port, auth, durationMs, gateway.pid));
      points.push(await measure('gateway-h1', c, gatewayH1.port, auth, durationMs, gatewayH1.pid));
      points.push(await measure('anchor-after', c, anchor.port, {}, durationMs, anchor.pid));
      if (nginx !== undefined) {
        const [master, ...workers] = await nginx.pids();
        points.push(await measure('nginx', c, nginx.port, {}, durationMs, master, workers));
      }
      points.push(await measure('write-floor', c, floor.port, {}, durationMs, floor.pid));
      if (c > 1) {
        points.push(await measure('direct-staggered', c, node.httpPort, {}, durationMs));
        points.push(await measure('gateway-staggered', c, gateway.port, auth, durationMs, gateway.pid));
      }
    }

    const summary = concurrencies.map((c) => {
      const at = (t: Target) => points.find((p) => p.concurrency === c && p.target === t)!;
      const staggered = c > 1 ? (at('gateway-staggered').ttft.p50Us - at('direct-staggered').ttft.p50Us) / 1000 : undefined;
      const gw = at('gateway');
      const anchorCpu = ((at('anchor-before').cpuPerToken?.totalUs ?? NaN) + (at('anchor-after').cpuPerToken?.totalUs ?? NaN)) / 2;
      const netCpu = (gw.cpuPerToken?.totalUs ?? NaN) - idleUsPerSec / gw.tokensPerSec;
      const processCpu = (t: Target): UserSys | undefined => points.find((p) => p.concurrency === c && p.target === t)?.userSysPerToken;
      const total = (split: UserSys | undefined): number => (split === undefined ? NaN : split.userUs + split.sysUs);
      return {
        concurrency: c,
        gatewayCpuUsPerToken: gw.cpuPerToken?.totalUs ?? NaN,
        gatewayCpuUsPerTokenNetOfIdle: netCpu,
        /** The same gateway build reaching the node over HTTP/1.1 (gross: its idle is not measured). */
        gatewayH1CpuUsPerToken: at('gateway-h1').cpuPerToken?.totalUs ?? NaN,
        anchorCpuUsPerToken: anchorCpu,
        /** nginx (master + worker) as an SSE relay; NaN when nginx is absent. */
        nginxCpuUsPerToken: total(processCpu('nginx')),
        /** A process that only writes the node's events to the clients: user and kernel time. */
        writeFloorCpuUsPerToken: total(processCpu('write-floor')),
        writeFloorSysUsPerToken: processCpu('write-floor')?.sysUs ?? NaN,
        gatewayUserSysPerToken: processCpu('gateway'),
        cpuRatioToAnchor: (gw.cpuPerToken?.totalUs ?? NaN) / anchorCpu,
        addedTtftP50Ms: (gw.ttft.p50Us - at('direct').ttft.p50Us) / 1000,
        cpuTargetMet: netCpu <= CPU_TARGET_US,
        ttftTargetMet: (gw.ttft.p50Us - at('direct').ttft.p50Us) / 1000 <= TTFT_TARGET_MS,
        /** The same with starts staggered over a stream's length (not a burst); undefined at 1 stream. */
        addedTtftP50StaggeredMs: staggered,
        /** The first starts of the phase (after the idle spell the other targets' runs make): gateway less direct, p50. */
        addedFirstStartsTtftP50Ms: (gw.firstTtft.p50Us - at('direct').firstTtft.p50Us) / 1000,
        core1BusyBurst: gw.core1Busy,
      };
    });
    const text = [
      `LLM streaming through the gateway, ${TOKENS_PER_STREAM} tokens per stream, ${ITL_MS} ms apart at the engine; ${options.durationS} s per point`,
      support.ok ? 'gateway / anchor alone on core 0; node, engine double, Redis and load generator on core 1' : `NOT pinned: ${support.why}`,
      `gateway idle (no stream): ${idleUsPerSec.toFixed(0)} µs of CPU per second`,
      '',
      table(points),
      '',
      formatTable(
        ['conc', 'gateway CPU µs/token', 'net of idle', 'gateway sys µs/token', 'over HTTP/1.1 (gross)', 'anchor CPU µs/token', 'ratio', 'nginx µs/token', 'write floor µs/token (sys)', `target <= ${CPU_TARGET_US} (net)`, 'added TTFT p50 ms (burst)', `target <= ${TTFT_TARGET_MS}`, 'added TTFT p50 ms (staggered)', 'first starts after idle: added p50 ms', 'core 1 busy (burst)'],
        summary.map((s) => [
          String(s.concurrency),
          s.gatewayCpuUsPerToken.toFixed(1),
          s.gatewayCpuUsPerTokenNetOfIdle.toFixed(1),
          s.gatewayUserSysPerToken === undefined ? '-' : s.gatewayUserSysPerToken.sysUs.toFixed(1),
          s.gatewayH1CpuUsPerToken.toFixed(1),
          s.anchorCpuUsPerToken.toFixed(1),
          s.cpuRatioToAnchor.toFixed(2),
          Number.isNaN(s.nginxCpuUsPerToken) ? '-' : s.nginxCpuUsPerToken.toFixed(1),
          `${s.writeFloorCpuUsPerToken.toFixed(1)} (${s.writeFloorSysUsPerToken.toFixed(1)})`,
          s.cpuTargetMet ? 'met' : 'MISSED',
          s.addedTtftP50Ms.toFixed(2),
          s.ttftTargetMet ? 'met' : 'MISSED',
          s.addedTtftP50StaggeredMs === undefined ? '-' : s.addedTtftP50StaggeredMs.toFixed(2),
          s.addedFirstStartsTtftP50Ms.toFixed(2),
          s.core1BusyBurst === undefined ? '-' : `${(s.core1BusyBurst * 100).toFixed(0)}%`,
        ]),
      ),
      '',
    ].join('\n');
    process.stdout.write(text);
    const dir = join(options.outRoot ?? DEFAULT_RESULTS_ROOT, localDate(started));
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'llm.json'), `${JSON.stringify({ started: started.toISOString(), command: `${keepWarm === undefined ? '' : `LLM_BENCH_KEEP_WARM_MS=${keepWarm} `}npm run bench -- llm ${process.argv.slice(3).join(' ')}`.trim(), pinned: support.ok, gatewayIdleCpuUsPerSec: idleUsPerSec, tokensPerStream: TOKENS_PER_STREAM, itlMs: ITL_MS, points, summary }, null, 2)}\n`);
    await writeFile(join(dir, 'llm.txt'), text);
    log(`results in ${dir}/llm.{json,txt}`);
    return points.some((p) => p.target.startsWith('gateway') && p.failedStreams > 0) ? 1 : 0;
  } finally {
    await stack.close();
    await rm(work, { recursive: true, force: true });
  }
}
