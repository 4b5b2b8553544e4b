/**
 * `npm run bench -- node-kill`: one of two nodes is SIGKILLed under load. What do clients see, and
 * how long until the gateway stops sending to the dead node?
 *
 * Two nodes serve `echo` (10 ms, 4 instances each: one node alone carries the load) behind one
 * gateway with the Redis fleet (small-fleet.ts). Open-loop Poisson load; at t = 5 s node 2 gets
 * SIGKILL (no goodbye: its load report stays in Redis until its TTL, its gRPC connections reset).
 * Every request's outcome is kept by send time (outcome-timeline.ts).
 *
 * Reported: the errors seen from the kill on (answered after it, whenever sent; count and kinds), the time until the success rate is back at
 * or above 99% for good (1 s sliding windows), when the gateway's fleet view dropped the node, and
 * whether the gateway's and node 1's outstanding-work counters return to 0 after the load.
 * Targets: success >= 99% again within 5 s of the kill; no counter left behind.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { waitForDrain } from '../lib/sampling/drain-check.js';
import { bucketTimeline, failureKinds, phaseCounts, recoveryAfter } from '../lib/sampling/outcome-timeline.js';
import { summarizeLatencies } from '../lib/sampling/percentiles.js';
import { runTimedLoad } from '../lib/load/timed-load.js';
import { drainTarget, timelineCharts, timelineCsv } from './fault-report.js';
import { atMost, fmt, target, targetLines, writeScenarioOutput } from './scenario-output.js';
import { waitForFleetSize } from './fleet-launch.js';
import { inferEcho, killNode, startSmallFleet } from './small-fleet.js';

const KILL_AT_MS = 5000;
const DURATION_MS = 20_000;
const QUICK_DURATION_MS = 12_000;
const RATE = 150;
const QUICK_RATE = 60;
const BUCKET_MS = 250;
/** Target: success back at or above 99% within this long after the kill. */
const RECOVERY_BOUND_MS = 5000;

const log = (message: string): void => void process.stderr.write(`[bench node-kill] ${message}\n`);

export async function runNodeKillScenario(options: BenchOptions): Promise<number> {
  const started = new Date();
  const t0 = performance.now();
  const rate = options.quick ? QUICK_RATE : RATE;
  const durationMs = options.quick ? QUICK_DURATION_MS : DURATION_MS;
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-node-kill-'));
  const fleet = await startSmallFleet(work, { nodes: 2 }, log);
  const client = fleet.client(1024, { 'cache-control': 'no-store' });
  const victim = fleet.nodes[1]!;
  const victimId = fleet.nodeIds[1]!;
  try {
    log(`${rate} req/s for ${durationMs / 1000} s; SIGKILL ${victimId} (pid ${victim.pid}) at ${KILL_AT_MS / 1000} s`);
    let value = 0;
    const run = await runTimedLoad({
      ratePerSec: rate,
      durationMs,
      seed: 5,
      call: () => inferEcho(client, value++),
      actions: [
        { name: `SIGKILL ${victimId}`, atMs: KILL_AT_MS, run: () => killNode(victim) },
        // Right after the kill: wait for the fleet view to hold one node (the node's key expiring, or
        // the gateway dropping it on its own), within what is left of the run.
        { name: 'fleet view: 1 node', atMs: KILL_AT_MS, run: async () => void (await waitForFleetSize(fleet.gatewayMetricsUrl, 1, durationMs - KILL_AT_MS, true)) },
      ],
    });
    const kill = run.actions[0]!;
    const fleetDrop = run.actions[1]!;
    const recovery = recoveryAfter(run.outcomes, kill.startMs, { endMs: durationMs });
    const before = phaseCounts(run.outcomes, 0, kill.startMs);
    const after = phaseCounts(run.outcomes, kill.startMs, durationMs);
    // Errors seen because of the kill include requests sent just before it and answered after it.
    const seen = run.outcomes.filter((o) => !o.ok && o.tMs + o.latencyMs >= kill.startMs);
    const kinds = failureKinds(seen);
    const survivors = { [fleet.nodeIds[0]!]: fleet.nodeMetricsUrls[fleet.nodeIds[0]!]! };
    const drain = await waitForDrain({ gatewayMetricsUrl: fleet.gatewayMetricsUrl, nodeMetricsUrls: survivors, redisUrl: fleet.redis.url });

    const figures = {
      ratePerSec: rate,
      durationMs,
      killAtMs: kill.startMs,
      victim: victimId,
      overall: { okPerSec: run.window.latenciesUs.length / run.window.windowS, latency: summarizeLatencies(run.window.latenciesUs), errors: run.window.errors, dropped: run.window.dropped },
      beforeKill: before,
      afterKill: after,
      /** Failures answered at or after the kill (whenever sent). */
      errorsSeen: seen.length,
      failureKindsSeen: kinds,
      /** Failures sent at or after the kill. */
      failuresSentAfterKill: recovery.failuresAfter,
      failuresBeforeKill: failureKinds(run.outcomes.filter((o) => o.tMs + o.latencyMs < kill.startMs)),
      recoveryMs: recovery.recoveryMs ?? null,
      worstWindowSuccess: recovery.worstRate,
      fleetViewDroppedAfterMs: fleetDrop.error === undefined ? fleetDrop.endMs - kill.startMs : null,
      fleetViewError: fleetDrop.error ?? null,
      drain,
      gatewayInflightExported: false,
    };
    const targets = [
      target(`success >= 99% again within ${RECOVERY_BOUND_MS / 1000} s of the kill`, recovery.recoveryMs ?? Number.POSITIVE_INFINITY, RECOVERY_BOUND_MS, 'ms', atMost,
        recovery.recoveryMs === undefined
          ? `not recovered within ${((durationMs - kill.startMs) / 1000).toFixed(0)} s; ${seen.length} errors seen`
          : `${fmt(recovery.recoveryMs / 1000, 2)} s; ${seen.length} errors seen from the kill on (${kinds.map((k) => `${k.count} ${k.error}`).join('; ') || 'none'})`),
      drainTarget(drain),
    ];
    const elapsedS = (performance.now() - t0) / 1000;
    const buckets = bucketTimeline(run.outcomes, BUCKET_MS, durationMs);
    const written = await writeScenarioOutput(options.outRoot, {
      scenario: 'node-kill',
      started,
      elapsedS,
      options: { quick: options.quick, ratePerSec: rate, durationMs, killAtMs: KILL_AT_MS, bucketMs: BUCKET_MS },
      figures,
      targets,
      notes: [
        'Outcomes are placed at their send time; recovery uses 1 s sliding windows every 100 ms from the kill on.',
        'The gateway\'s per-node in-flight count is not exported as a metric; the drain check reads its queue depth, node 1\'s pending count and load report.',
        'Requests carry Cache-Control: no-store (every one goes upstream).',
      ],
      csv: timelineCsv(run.outcomes, BUCKET_MS, durationMs),
      charts: timelineCharts(`node killed at ${fmt(kill.startMs / 1000)} s`, buckets, [kill], BUCKET_MS),
    });
    process.stdout.write(
      [`node-kill: ${rate} req/s, SIGKILL at ${fmt(kill.startMs / 1000, 2)} s, ${elapsedS.toFixed(0)} s total`,
        `before the kill: ${before.ok} ok, ${before.failed} failed; after: ${after.ok} ok, ${after.failed} failed (p99 ${fmt(after.p99Ms, 1)} ms)`,
        `fleet view dropped the node after ${figures.fleetViewDroppedAfterMs === null ? `- (${figures.fleetViewError})` : `${fmt(figures.fleetViewDroppedAfterMs / 1000, 2)} s`}`,
        '', ...targetLines(targets), '', `results: ${written.json}`, ''].join('\n'),
    );
    // A MISS is a finding reported in the summary, not a failure of the bench.
    return 0;
  } finally {
    await client.close();
    await fleet.close();
    await rm(work, { recursive: true, force: true });
  }
}
