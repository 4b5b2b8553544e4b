/**
 * `npm run bench -- gateway`: what the gateway costs and what it buys, in one run:
 *
 *   1. added latency: p50/p99 through the gateway minus straight to the node, `simple` at a fixed rate;
 *   2. cache-hit throughput against a bare Hono hello-world on the same machine;
 *   3. overload at twice the measured capacity with premium, standard and free tiers: goodput and p99
 *      per tier, and how fast admission refusals answer;
 *   4. four nodes, one three times slower: power of two choices against round robin (p99).
 *
 * Targets: added p50 < 0.5 ms and p99 < 2 ms; cache hits >= 0.5 x bare Hono; under overload premium
 * keeps >= 95% of its goodput (vs. premium alone at the same rate) and its p99 <= its queue timeout +
 * 2 service times, and refusals answer within 5 ms at p99; p2c's p99 <= half of round robin's.
 *
 * Processes and models: gateway-fleet.ts; the measurements: gateway-phases.ts; verdicts and outputs:
 * gateway-report.ts. The load generator is this process (plus http-flood worker threads for phase 2)
 * and shares the machine with everything it measures; the JSON records the machine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TIERS } from '../../../gateway/src/config/default-tiers.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { DEFAULT_RESULTS_ROOT, writeResults } from '../lib/output/results-files.js';
import { startFleet, type Fleet, type FleetShape } from './gateway-fleet.js';
import { measureAddedLatency, measureCacheThroughput, measureOverload, measureRouting, type OpenPoint, type PhaseTiming } from './gateway-phases.js';
import { evaluateTargets, gatewayTable, targetLines, toGatewayCsv, type GatewayFigures } from './gateway-report.js';
import { runGatewayPerCore } from './gateway-per-core.js';
import { machineInfo } from './scenario-output.js';

/** 20 ms per request, node 4 at 60 ms: long enough that timer jitter and the gateway's own cost are small. */
const SHAPE: FleetShape = { serviceMs: 20, slowFactor: 3, workInstances: 2, steadyInstances: 4 };
/** Quick runs halve `steady`'s capacity, so a shared machine can offer twice of it. */
const QUICK_SHAPE: FleetShape = { ...SHAPE, steadyInstances: 2 };
/** Phase 1's fixed rate, requests/s. */
const LATENCY_RATE = 200;
const QUICK_LATENCY_RATE = 100;
/** Phase 4's offered load as a share of the `work` fleet's nominal capacity. */
const ROUTING_LOAD_FACTOR = 0.6;
/** Keep-alive connections per http-flood thread in phase 2. */
const FLOOD_CONNECTIONS = 32;

const log = (message: string): void => void process.stderr.write(`[bench gateway] ${message}\n`);

const fmtMs = (us: number): string => (Number.isFinite(us) ? (us / 1000).toFixed(2) : '-');
const describe = (p: OpenPoint): string =>
  `${p.completedPerSec.toFixed(1)} ok/s, p50 ${fmtMs(p.latency.p50Us)} ms, p99 ${fmtMs(p.latency.p99Us)} ms` +
  (p.errors > 0 ? `, ${p.errors} errors (${p.firstError})` : '') +
  (p.dropped > 0 ? `, ${p.dropped} dropped` : '') +
  (p.serverCpuUsPerRequest !== undefined && Number.isFinite(p.serverCpuUsPerRequest) ? `, server CPU ${p.serverCpuUsPerRequest.toFixed(0)} us/req` : '');

export async function runGatewayScenario(options: BenchOptions): Promise<number> {
  if (options.perCore === true) return runGatewayPerCore(options);
  const started = new Date();
  const t0 = performance.now();
  const cores = availableParallelism();
  const shape = options.quick ? QUICK_SHAPE : SHAPE;
  const timing: PhaseTiming = { warmupS: options.warmupS, durationS: options.durationS };
  // The standard tier waits up to 2 s in the queue: the overload warm-up outlasts it so the window
  // sees the queues in their steady state, not filling up.
  const overloadWarmupS = options.quick ? Math.max(options.warmupS, 1) : Math.max(options.warmupS, 3);
  const latencyRate = options.quick ? QUICK_LATENCY_RATE : LATENCY_RATE;
  // The gateway is one event loop; the generator gets up to four threads, leaving cores to the gateway and Redis.
  const flood = { threads: Math.max(1, Math.min(4, Math.floor(cores / 2))), connections: FLOOD_CONNECTIONS };
  const command = `npm run bench -- ${process.argv.slice(2).join(' ')}`;
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-gateway-'));
  let fleet: Fleet | undefined;
  try {
    log(`starting redis, 4 nodes, 2 gateways and a bare Hono server (work dir ${work})`);
    fleet = await startFleet(work, shape, log);

    log(`1/4 added latency: simple at ${latencyRate} req/s, direct then through the gateway`);
    const addedLatency = await measureAddedLatency(fleet, latencyRate, timing);
    log(`  direct: ${describe(addedLatency.direct)}`);
    log(`  gateway: ${describe(addedLatency.gateway)}`);

    log(`2/4 cache-hit throughput: ${flood.threads} threads x ${flood.connections} connections, bare Hono, node:http replaying the cached answer, then gateway`);
    const cache = await measureCacheThroughput(fleet, flood, timing);
    log(`  bare Hono ${cache.bareHono.requestsPerSec.toFixed(0)} req/s (CPU ${cache.bareHono.serverCpuUsPerRequest.toFixed(0)} us/req), ` +
      `node:http replay ${cache.nodeHttpReplay.requestsPerSec.toFixed(0)} req/s (CPU ${cache.nodeHttpReplay.serverCpuUsPerRequest.toFixed(0)} us/req), ` +
      `cache hits ${cache.cacheHit.requestsPerSec.toFixed(0)} req/s (CPU ${cache.cacheHit.serverCpuUsPerRequest.toFixed(0)} us/req)` +
      (cache.cacheHit.errors > 0 ? `, ${cache.cacheHit.errors} errors (${cache.cacheHit.firstError})` : '') +
      (cache.cacheHit.mismatched > 0 ? `, ${cache.cacheHit.mismatched} not hits ${JSON.stringify(cache.cacheHit.mismatchedValues)}` : ''));

    log(`3/4 overload: capacity of 'steady' on 2 nodes x ${shape.steadyInstances} instances x ${shape.serviceMs} ms, premium alone, then 3 tiers at 2x`);
    const overload = await measureOverload(fleet, shape, timing, overloadWarmupS);
    log(`  capacity ${overload.capacityPerSec.toFixed(1)} req/s (nominal ${overload.nominalCapacityPerSec.toFixed(1)})`);
    const labelled = [...overload.premiumAlone.tiers.map((t) => ['alone', t] as const), ...overload.overload.tiers.map((t) => ['2x', t] as const)];
    for (const [label, t] of labelled) {
      log(`  ${t.tier} ${label}: offered ${t.offeredPerSec.toFixed(1)}, sent ${t.sentPerSec.toFixed(1)}, goodput ${t.goodputPerSec.toFixed(1)} req/s, p99 ${fmtMs(t.latency.p99Us)} ms, ` +
        `rejected ${t.failures.rejected} (p99 ${fmtMs(t.rejected.p99Us)} ms), expired ${t.failures.expired}, evicted ${t.failures.evicted}`);
    }

    log(`4/4 routing: 'work' on 4 nodes (node 4 x${shape.slowFactor} slower) at ${ROUTING_LOAD_FACTOR} of nominal capacity, p2c then round robin`);
    const routing = await measureRouting(fleet, shape, ROUTING_LOAD_FACTOR, timing);
    for (const p of routing.points) log(`  ${p.policy}: ${describe(p)}; per node ${JSON.stringify(p.perNode)}`);

    const figures: GatewayFigures = {
      addedLatency,
      cache,
      overload,
      routing,
      premiumQueueTimeoutMs: DEFAULT_TIERS.premium.queueTimeoutMs,
    };
    const targets = evaluateTargets(figures);
    const elapsedS = (performance.now() - t0) / 1000;
    const json = {
      scenario: 'gateway',
      command,
      startedAt: started.toISOString(),
      elapsedS,
      machine: machineInfo(),
      options: { warmupS: timing.warmupS, durationS: timing.durationS, overloadWarmupS, quick: options.quick },
      shape,
      latencyRatePerSec: latencyRate,
      routingLoadFactor: ROUTING_LOAD_FACTOR,
      gatewayConfigs: fleet.gatewayConfigs,
      figures,
      targets: targets.map((t) => ({ ...t, command })),
      notes: [
        'Every figure comes from one run of `command`; latencies are in microseconds in this file, milliseconds in the CSV.',
        'Latency: open loop, measured from each request\'s intended send time (no coordinated omission). Phase 1 sends Cache-Control: no-store.',
        'The gateway runs with a private Redis (tenants, rate limits that never refuse, cache, fleet from the nodes\' load reports).',
        'Cache-hit throughput is a closed loop from http-flood worker threads; every counted answer carried x-cache: HIT.',
        'Overload capacity is measured through the gateway; "alone" is premium only at the same premium rate as under overload.',
        '"rejected" = 503 refused at admission (timed send to answer); "expired"/"evicted" waited in the gateway queue first.',
        'The load generator, Redis, the nodes and the gateways share the machine.',
        'server_cpu_us_per_req: user+system CPU of the server process (node, gateway or Hono) per answered request in the window, from /proc.',
      ],
    };
    const paths = await writeResults(options.outRoot ?? DEFAULT_RESULTS_ROOT, 'gateway', started, json, toGatewayCsv(figures));

    const out: string[] = [];
    out.push(`gateway: ${cores} cores, ${timing.warmupS} s warm-up + ${timing.durationS} s per point, ${elapsedS.toFixed(0)} s total`);
    out.push(`command: ${command}`);
    out.push(`overload capacity ('steady', 2 nodes x ${shape.steadyInstances} x ${shape.serviceMs} ms): ` +
      `${overload.capacityPerSec.toFixed(1)} req/s measured, ${overload.nominalCapacityPerSec.toFixed(1)} nominal`);
    out.push('', gatewayTable(figures), '', ...targetLines(targets), '', `results: ${paths.json}`, `         ${paths.csv}`);
    process.stdout.write(`${out.join('\n')}\n`);

    const unexpected =
      addedLatency.direct.errors + addedLatency.gateway.errors + cache.bareHono.errors + cache.nodeHttpReplay.errors + cache.cacheHit.errors +
      overload.capacityErrors + routing.points.reduce((n, p) => n + p.errors, 0);
    if (unexpected > 0) log(`${unexpected} requests failed outside the overload phase; see the JSON's firstError fields`);
    return unexpected > 0 ? 1 : 0;
  } catch (error) {
    if (fleet !== undefined) {
      for (const server of [...Object.values(fleet.gateways), fleet.hono]) {
        if (server.exited()) log(`${server.name} exited; its last log lines:\n${server.recentLog().join('\n')}`);
      }
    }
    throw error;
  } finally {
    await fleet?.close();
    await rm(work, { recursive: true, force: true });
  }
}
