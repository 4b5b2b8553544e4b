/**
 * `npm run bench -- cache-ratio`: the gateway's response cache at 0, 50 and 90% hit ratio.
 *
 * Two nodes serve `echo` (10 ms per request, 4 instances each) behind one gateway that caches it
 * (small-fleet.ts). A hot set of 16 requests is sent once to fill the cache; then, at a fixed rate
 * (open loop, Poisson arrivals, latency from the intended send time), each request is a hot one with
 * probability = the target ratio (seeded, repeatable) and otherwise a request never sent before (a
 * certain miss). The measured ratio comes from the gateway's `tessera_gateway_cache_requests_total`
 * over the window, and the load on the nodes from its upstream call counts.
 *
 * Targets: the measured ratio within 5 points of the target (the scenario does what it says); at 90%
 * hits, p50 at most half of p50 at 0% (hits skip the 10 ms service time) and upstream calls at most
 * 15% of the requests; no failed request.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arrivalGaps, mulberry32 } from '../lib/load/arrival-gaps.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { sleep } from '../lib/load/load-window.js';
import { startOpenLoad } from '../lib/load/open-loop.js';
import { summarizeLatencies, type LatencySummary } from '../lib/sampling/percentiles.js';
import { scrapeMetrics, selectSamples, type PromSample } from '../lib/sampling/prom-text.js';
import { formatTable } from '../lib/output/text-table.js';
import { atMost, fmt, target, targetLines, writeScenarioOutput, type Target } from './scenario-output.js';
import { ECHO_MODEL, inferEcho, startSmallFleet } from './small-fleet.js';

export const HIT_RATIOS = [0, 0.5, 0.9] as const;
const HOT_SET = 16;
/** Offered load, requests/s: well under the fleet's 800/s, so latency is service time, not queueing. */
const RATE = 150;
const QUICK_RATE = 60;
/** Unique (miss) inputs start here: far from the hot set's values, exact in FP32 up to 2^24. */
const UNIQUE_BASE = 1_000_000;

const log = (message: string): void => void process.stderr.write(`[bench cache-ratio] ${message}\n`);

export interface CachePoint {
  readonly targetRatio: number;
  readonly ratePerSec: number;
  readonly okPerSec: number;
  readonly latency: LatencySummary;
  readonly errors: number;
  readonly dropped: number;
  readonly firstError?: string;
  /** hits / (hits + misses + bypasses) from the gateway's counters over the window. */
  readonly measuredRatio: number;
  readonly cache: { readonly hit: number; readonly miss: number; readonly bypass: number };
  /** Upstream infer calls to the nodes per second, from the gateway's histogram counts. */
  readonly upstreamPerSec: number;
}

interface Counters {
  readonly hit: number;
  readonly miss: number;
  readonly bypass: number;
  readonly upstream: number;
}

export function cacheCounters(samples: readonly PromSample[], model: string): Counters {
  const result = (r: string): number =>
    selectSamples(samples, 'tessera_gateway_cache_requests_total', { model, result: r }).reduce((a, s) => a + s.value, 0);
  const upstream = selectSamples(samples, 'tessera_gateway_upstream_duration_seconds_count', { model }).reduce((a, s) => a + s.value, 0);
  return { hit: result('hit'), miss: result('miss'), bypass: result('bypass'), upstream };
}

export function evaluateCacheTargets(points: readonly CachePoint[]): Target[] {
  const at = (r: number): CachePoint | undefined => points.find((p) => p.targetRatio === r);
  const cold = at(0);
  const hot = at(0.9);
  const ratioTargets = points.map((p) =>
    target(`measured hit ratio at ${p.targetRatio * 100}% within 5 points`, Math.abs(p.measuredRatio - p.targetRatio) * 100, 5, 'points', atMost,
      `measured ${fmt(p.measuredRatio * 100)}% (${p.cache.hit} hits, ${p.cache.miss} misses, ${p.cache.bypass} bypasses)`),
  );
  const errors = points.reduce((a, p) => a + p.errors, 0);
  return [
    ...ratioTargets,
    target('p50 at 90% hits <= 0.5 x p50 at 0%', (hot?.latency.p50Us ?? Number.NaN) / (cold?.latency.p50Us ?? Number.NaN), 0.5, 'x', atMost,
      `${fmt((hot?.latency.p50Us ?? Number.NaN) / 1000, 2)} vs ${fmt((cold?.latency.p50Us ?? Number.NaN) / 1000, 2)} ms`),
    target('upstream calls at 90% hits <= 15% of requests', (hot?.upstreamPerSec ?? Number.NaN) / (hot?.okPerSec ?? Number.NaN), 0.15, 'x', atMost,
      `${fmt(hot?.upstreamPerSec ?? Number.NaN)} upstream/s for ${fmt(hot?.okPerSec ?? Number.NaN)} ok/s`),
    target('no failed request', errors, 0, 'requests', atMost, `${errors} failed over ${points.length} points`),
  ];
}

const ms = (us: number): string => fmt(us / 1000, 2);

export function cacheTable(points: readonly CachePoint[]): string {
  return formatTable(
    ['hit ratio', 'measured', 'offered/s', 'ok/s', 'upstream/s', 'p50 ms', 'p90 ms', 'p99 ms', 'failed'],
    points.map((p) => [
      `${p.targetRatio * 100}%`,
      `${fmt(p.measuredRatio * 100)}%`,
      fmt(p.ratePerSec),
      fmt(p.okPerSec),
      fmt(p.upstreamPerSec),
      ms(p.latency.p50Us),
      ms(p.latency.p90Us),
      ms(p.latency.p99Us),
      String(p.errors),
    ]),
  );
}

function toCsv(points: readonly CachePoint[]): string {
  const lines = points.map((p) =>
    [p.targetRatio, p.measuredRatio.toFixed(4), p.ratePerSec, p.okPerSec.toFixed(1), p.upstreamPerSec.toFixed(1),
      (p.latency.p50Us / 1000).toFixed(3), (p.latency.p90Us / 1000).toFixed(3), (p.latency.p99Us / 1000).toFixed(3), p.errors].join(','),
  );
  return `${['target_ratio,measured_ratio,offered_per_s,ok_per_s,upstream_per_s,p50_ms,p90_ms,p99_ms,errors', ...lines].join('\n')}\n`;
}

export async function runCacheRatioScenario(options: BenchOptions): Promise<number> {
  const started = new Date();
  const t0 = performance.now();
  const rate = options.quick ? QUICK_RATE : RATE;
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-cache-'));
  const fleet = await startSmallFleet(work, { cache: true }, log);
  const client = fleet.client(1024);
  try {
    // Fill the cache with the hot set (sequentially: each answer is stored before the next is sent).
    for (let h = 0; h < HOT_SET; h++) await inferEcho(client, h * 10);
    await sleep(200);
    const points: CachePoint[] = [];
    let unique = UNIQUE_BASE;
    for (const ratio of HIT_RATIOS) {
      const uniform = mulberry32(42);
      const load = startOpenLoad({
        nextGapMs: arrivalGaps('poisson', rate, 3),
        maxOutstanding: 1024,
        call: (seq) => inferEcho(client, uniform() < ratio ? (seq % HOT_SET) * 10 : unique++),
      });
      let before: Counters = { hit: 0, miss: 0, bypass: 0, upstream: 0 };
      let after = before;
      let window;
      try {
        await sleep(options.warmupS * 1000);
        window = await load.measure(options.durationS * 1000, {
          onWindowStart: async () => void (before = cacheCounters(await scrapeMetrics(fleet.gatewayMetricsUrl), ECHO_MODEL)),
          onWindowEnd: async () => void (after = cacheCounters(await scrapeMetrics(fleet.gatewayMetricsUrl), ECHO_MODEL)),
        });
      } finally {
        await load.stop();
      }
      const cache = { hit: after.hit - before.hit, miss: after.miss - before.miss, bypass: after.bypass - before.bypass };
      const lookups = cache.hit + cache.miss + cache.bypass;
      const firstError = load.firstError();
      const point: CachePoint = {
        targetRatio: ratio,
        ratePerSec: rate,
        okPerSec: window.latenciesUs.length / window.windowS,
        latency: summarizeLatencies(window.latenciesUs),
        errors: window.errors,
        dropped: window.dropped,
        ...(window.errors > 0 && firstError !== undefined ? { firstError } : {}),
        measuredRatio: lookups > 0 ? cache.hit / lookups : Number.NaN,
        cache,
        upstreamPerSec: (after.upstream - before.upstream) / window.windowS,
      };
      points.push(point);
      log(`${ratio * 100}% hits: measured ${fmt(point.measuredRatio * 100)}%, ${fmt(point.okPerSec)} ok/s, p50 ${ms(point.latency.p50Us)} ms, ` +
        `p99 ${ms(point.latency.p99Us)} ms, upstream ${fmt(point.upstreamPerSec)}/s` + (point.errors > 0 ? `, ${point.errors} errors (${point.firstError})` : ''));
    }
    const targets = evaluateCacheTargets(points);
    const elapsedS = (performance.now() - t0) / 1000;
    const written = await writeScenarioOutput(options.outRoot, {
      scenario: 'cache-ratio',
      started,
      elapsedS,
      options: { warmupS: options.warmupS, durationS: options.durationS, quick: options.quick, ratePerSec: rate, hotSet: HOT_SET },
      figures: { points, fleet: { nodes: fleet.nodeIds.length, capacityPerSec: fleet.capacityPerSec, gatewayConfig: fleet.config } },
      targets,
      notes: [
        'Open loop, Poisson arrivals; latency from each request\'s intended send time. Misses are requests never sent before.',
        'Measured ratio and upstream calls come from the gateway\'s own counters over the measurement window.',
        'The load generator, Redis, the nodes and the gateway share the machine.',
      ],
      csv: toCsv(points),
      charts: {
        latency: {
          title: `cache: latency vs hit ratio (${rate} req/s, echo 10 ms)`,
          xLabel: 'target hit ratio (%)',
          yLabel: 'latency (ms)',
          series: (['p50Us', 'p90Us', 'p99Us'] as const).map((k) => ({
            name: k.slice(0, 3),
            points: points.map((p) => ({ x: p.targetRatio * 100, y: p.latency[k] / 1000 })),
          })),
        },
        upstream: {
          title: 'cache: requests reaching the nodes',
          xLabel: 'target hit ratio (%)',
          yLabel: 'requests/s',
          series: [
            { name: 'answered', points: points.map((p) => ({ x: p.targetRatio * 100, y: p.okPerSec })) },
            { name: 'upstream', points: points.map((p) => ({ x: p.targetRatio * 100, y: p.upstreamPerSec })) },
          ],
        },
      },
    });
    process.stdout.write(
      [`cache-ratio: ${rate} req/s, ${options.warmupS} s warm-up + ${options.durationS} s per ratio, ${elapsedS.toFixed(0)} s total`, '',
        cacheTable(points), '', ...targetLines(targets), '', `results: ${written.json}`, ''].join('\n'),
    );
    return points.some((p) => p.errors > 0) ? 1 : 0;
  } finally {
    await client.close();
    await fleet.close();
    await rm(work, { recursive: true, force: true });
  }
}
