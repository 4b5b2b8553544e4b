/**
 * `npm run bench -- redis-stop`: Redis stops under load and comes back. The gateway's promise
 * (gateway/README.md): rate limits fail open, the cache is bypassed (but for the copies a gateway
 * holds in memory, served as hits until they expire, at most `cache.localMaxAgeSeconds`), keys seen
 * recently are still accepted, so clients should see (almost) no errors; and everything resumes
 * when Redis returns.
 *
 * Two nodes serve `echo` behind one gateway that caches it; half the requests are repeats of a hot
 * set (cache hits while Redis is up). Open-loop Poisson load; at t = 5 s Redis gets SIGTERM (it saves
 * its dataset: the fleet runs Redis with persistence, as after a planned stop, so tenants and keys
 * are still there when it returns; a Redis restarted empty would lose the seeded tenants, which is a
 * different test), stays down for 10 s (5 s with --quick), then restarts on the same port.
 *
 * Reported per phase (before, outage, after): successes, failures, error rate, p99; the gateway's
 * cache hit/miss/bypass counts, rate-limit store errors and fleet size; the time until success is at
 * or above 99% for good after the stop and after the restart; the drain check after the load.
 * Targets: error rate <= 1% during the outage and after it; recovery within 5 s of the restart; no
 * counter left behind.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '../lib/load/arrival-gaps.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { waitForDrain } from '../lib/sampling/drain-check.js';
import { bucketTimeline, failureKinds, phaseCounts, recoveryAfter } from '../lib/sampling/outcome-timeline.js';
import { scrapeMetrics, selectSamples, type PromSample } from '../lib/sampling/prom-text.js';
import { runTimedLoad } from '../lib/load/timed-load.js';
import { drainTarget, timelineCharts, timelineCsv } from './fault-report.js';
import { atMost, fmt, target, targetLines, writeScenarioOutput } from './scenario-output.js';
import { ECHO_MODEL, inferEcho, startSmallFleet } from './small-fleet.js';

const STOP_AT_MS = 5000;
const OUTAGE_MS = 10_000;
const QUICK_OUTAGE_MS = 5000;
const AFTER_MS = 10_000;
const QUICK_AFTER_MS = 6000;
const RATE = 150;
const QUICK_RATE = 60;
const HOT_SET = 16;
const BUCKET_MS = 250;
const MAX_ERROR_RATE = 0.01;
const RECOVERY_BOUND_MS = 5000;

const log = (message: string): void => void process.stderr.write(`[bench redis-stop] ${message}\n`);

export interface GatewayRedisCounters {
  readonly hit: number;
  readonly miss: number;
  readonly bypass: number;
  /** Bypasses by reason (`no-store`, `ttl-zero`, `store-unavailable`). */
  readonly bypassReasons: Readonly<Record<string, number>>;
  readonly rateLimitStoreErrors: number;
  readonly fleetNodes: number;
}

export function redisCounters(samples: readonly PromSample[]): GatewayRedisCounters {
  const sum = (name: string, labels: Record<string, string> = {}): number => selectSamples(samples, name, labels).reduce((a, s) => a + s.value, 0);
  const bypassReasons: Record<string, number> = {};
  for (const s of selectSamples(samples, 'tessera_gateway_cache_bypass_total', { model: ECHO_MODEL })) {
    const reason = s.labels.reason ?? '?';
    bypassReasons[reason] = (bypassReasons[reason] ?? 0) + s.value;
  }
  return {
    bypassReasons,
    hit: sum('tessera_gateway_cache_requests_total', { model: ECHO_MODEL, result: 'hit' }),
    miss: sum('tessera_gateway_cache_requests_total', { model: ECHO_MODEL, result: 'miss' }),
    bypass: sum('tessera_gateway_cache_requests_total', { model: ECHO_MODEL, result: 'bypass' }),
    rateLimitStoreErrors: sum('tessera_gateway_rate_limit_store_errors_total'),
    fleetNodes: sum('tessera_gateway_fleet_nodes'),
  };
}

/** Counter increases between two snapshots; the fleet size is the later one's. */
export function counterDelta(a: GatewayRedisCounters, b: GatewayRedisCounters): GatewayRedisCounters {
  const bypassReasons: Record<string, number> = {};
  for (const [reason, n] of Object.entries(b.bypassReasons)) {
    const d = n - (a.bypassReasons[reason] ?? 0);
    if (d > 0) bypassReasons[reason] = d;
  }
  return {
    hit: b.hit - a.hit,
    miss: b.miss - a.miss,
    bypass: b.bypass - a.bypass,
    bypassReasons,
    rateLimitStoreErrors: b.rateLimitStoreErrors - a.rateLimitStoreErrors,
    fleetNodes: b.fleetNodes,
  };
}

export async function runRedisStopScenario(options: BenchOptions): Promise<number> {
  const started = new Date();
  const t0 = performance.now();
  const rate = options.quick ? QUICK_RATE : RATE;
  const outageMs = options.quick ? QUICK_OUTAGE_MS : OUTAGE_MS;
  const afterMs = options.quick ? QUICK_AFTER_MS : AFTER_MS;
  const plannedMs = STOP_AT_MS + outageMs + afterMs;
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-redis-stop-'));
  const fleet = await startSmallFleet(work, { cache: true, redisPersistence: true }, log);
  const client = fleet.client(1024);
  try {
    for (let h = 0; h < HOT_SET; h++) await inferEcho(client, h * 10);
    log(`${rate} req/s for ${plannedMs / 1000} s, half of them cache hits; Redis stops at ${STOP_AT_MS / 1000} s for ${outageMs / 1000} s`);
    const snapshot = async (): Promise<GatewayRedisCounters | undefined> => {
      try {
        return redisCounters(await scrapeMetrics(fleet.gatewayMetricsUrl));
      } catch {
        return undefined;
      }
    };
    // The gateway's counters at the start, just before the stop, just before the restart, at the end.
    const snaps: Record<'start' | 'stop' | 'restart' | 'end', GatewayRedisCounters | undefined> = { start: await snapshot(), stop: undefined, restart: undefined, end: undefined };
    const uniform = mulberry32(9);
    let unique = 1_000_000;
    const run = await runTimedLoad({
      ratePerSec: rate,
      durationMs: plannedMs,
      // The phase after the restart lasts `afterMs` from when Redis answers again, however long it took.
      tailMs: afterMs,
      seed: 13,
      call: (seq) => inferEcho(client, uniform() < 0.5 ? (seq % HOT_SET) * 10 : unique++),
      actions: [
        { name: 'redis stop', atMs: STOP_AT_MS, run: async () => { snaps.stop = await snapshot(); await fleet.redis.stop(); } },
        { name: 'redis restart', atMs: STOP_AT_MS + outageMs, run: async () => { snaps.restart = await snapshot(); await fleet.redis.restart(); } },
      ],
    });
    snaps.end = await snapshot();
    const durationMs = run.endMs;
    const [stop, restart] = [run.actions[0]!, run.actions[1]!];
    const phases = {
      before: phaseCounts(run.outcomes, 0, stop.startMs),
      outage: phaseCounts(run.outcomes, stop.startMs, restart.endMs),
      after: phaseCounts(run.outcomes, restart.endMs, durationMs),
    };
    const delta = (a: GatewayRedisCounters | undefined, b: GatewayRedisCounters | undefined) => (a !== undefined && b !== undefined ? counterDelta(a, b) : null);
    const gateway = { before: delta(snaps.start, snaps.stop), outage: delta(snaps.stop, snaps.restart), after: delta(snaps.restart, snaps.end) };
    const afterStop = recoveryAfter(run.outcomes, stop.startMs, { endMs: restart.startMs });
    const afterRestart = recoveryAfter(run.outcomes, restart.endMs, { endMs: durationMs });
    const drain = await waitForDrain({ gatewayMetricsUrl: fleet.gatewayMetricsUrl, nodeMetricsUrls: fleet.nodeMetricsUrls, redisUrl: fleet.redis.url });
    const figures = {
      ratePerSec: rate,
      durationMs,
      plannedMs,
      stopAtMs: stop.startMs,
      stopTookMs: stop.endMs - stop.startMs,
      restartAtMs: restart.startMs,
      restartTookMs: restart.endMs - restart.startMs,
      actionErrors: run.actions.filter((a) => a.error !== undefined),
      phases,
      gateway,
      failureKinds: {
        before: failureKinds(run.outcomes.filter((o) => o.tMs < stop.startMs)),
        outage: failureKinds(run.outcomes.filter((o) => o.tMs >= stop.startMs && o.tMs < restart.endMs)),
        after: failureKinds(run.outcomes.filter((o) => o.tMs >= restart.endMs)),
      },
      recoveryAfterStopMs: afterStop.recoveryMs ?? null,
      recoveryAfterRestartMs: afterRestart.recoveryMs ?? null,
      drain,
    };
    const rateDetail = (p: { ok: number; failed: number; p99Ms: number }, kinds: ReturnType<typeof failureKinds>): string =>
      `${p.failed} of ${p.ok + p.failed} failed, p99 ${fmt(p.p99Ms)} ms${kinds.length > 0 ? ` (${kinds.map((k) => `${k.count} ${k.error}`).join('; ')})` : ''}`;
    const targets = [
      target('error rate during the outage <= 1%', phases.outage.errorRate * 100, MAX_ERROR_RATE * 100, '%', atMost, rateDetail(phases.outage, figures.failureKinds.outage)),
      target('error rate after the restart <= 1%', phases.after.errorRate * 100, MAX_ERROR_RATE * 100, '%', atMost, rateDetail(phases.after, figures.failureKinds.after)),
      target(`success >= 99% within ${RECOVERY_BOUND_MS / 1000} s of the restart`, afterRestart.recoveryMs ?? Number.POSITIVE_INFINITY, RECOVERY_BOUND_MS, 'ms', atMost,
        afterRestart.recoveryMs === undefined ? 'not recovered before the end of the run' : `${fmt(afterRestart.recoveryMs / 1000, 2)} s`),
      drainTarget(drain),
    ];
    const elapsedS = (performance.now() - t0) / 1000;
    const written = await writeScenarioOutput(options.outRoot, {
      scenario: 'redis-stop',
      started,
      elapsedS,
      options: { quick: options.quick, ratePerSec: rate, plannedMs, stopAtMs: STOP_AT_MS, outageMs, bucketMs: BUCKET_MS, hotSet: HOT_SET },
      figures,
      targets,
      notes: [
        'Outcomes are placed at their send time; the outage phase runs from the stop until the restarted Redis answers PING.',
        'Redis runs with RDB persistence (saved on SIGTERM, loaded on restart), so seeded tenants survive the restart.',
        'Gateway counters: cache results for echo, rate-limit store errors (fail-open), fleet size at the end of each phase.',
      ],
      csv: timelineCsv(run.outcomes, BUCKET_MS, durationMs),
      charts: timelineCharts('Redis stopped and restarted', bucketTimeline(run.outcomes, BUCKET_MS, durationMs), [stop, restart], BUCKET_MS),
    });
    const line = (name: string, p: { ok: number; failed: number; p99Ms: number }, g: GatewayRedisCounters | null): string =>
      `${name.padEnd(7)} ${String(p.ok).padStart(5)} ok ${String(p.failed).padStart(4)} failed  p99 ${fmt(p.p99Ms).padStart(8)} ms` +
      (g !== null ? `  cache hit/miss/bypass ${g.hit}/${g.miss}/${g.bypass} ${JSON.stringify(g.bypassReasons)}, rate-limit store errors ${g.rateLimitStoreErrors}, fleet ${g.fleetNodes}` : '');
    process.stdout.write(
      [`redis-stop: ${rate} req/s, Redis down ${fmt(stop.startMs / 1000, 2)}–${fmt(restart.endMs / 1000, 2)} s, ${elapsedS.toFixed(0)} s total`,
        line('before', phases.before, gateway.before), line('outage', phases.outage, gateway.outage), line('after', phases.after, gateway.after),
        '', ...targetLines(targets), '', `results: ${written.json}`, ''].join('\n'),
    );
    return 0;
  } finally {
    await client.close();
    await fleet.close();
    await rm(work, { recursive: true, force: true });
  }
}
