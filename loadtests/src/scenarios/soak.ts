/**
 * `npm run bench -- soak [--soak-minutes M]`: steady load for minutes, watching what only time shows:
 * memory that keeps growing, an event loop that gets slower, a counter of outstanding work that does
 * not return to 0 once the load stops.
 *
 * Two nodes serve `echo` behind one gateway caching it; half the requests repeat a hot set (cache
 * hits), half are new (misses, stored: the cache grows until its TTL). Open-loop Poisson load at a
 * modest rate. The gateway's and the nodes' /metrics are scraped about 60 times over the run (every
 * 1 to 10 s; see process-sampler.ts for the metrics), and after the load stops every
 * outstanding-work counter must return to 0 (drain-check.ts).
 *
 * Length: `--soak-minutes M`; else 1 minute alone, 20 s with --quick; in the suite, what is left of the
 * budget (suite.ts). Targets: no counter left behind; error rate <= 0.1%; the gateway's RSS grows by
 * at most 2 MiB per minute over the second half of the run (a leak of 1 KiB per request at 100 req/s
 * would be 6 MiB/min; the first half is left out, as heaps and caches grow to their working size),
 * judged only for soaks of 5 minutes or more (N/A below: still warm-up).
 * Event-loop delay is reported, not judged: on a shared machine it measures the neighbours too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '../lib/load/arrival-gaps.js';
import type { BenchOptions } from '../lib/options/bench-options.js';
import { waitForDrain } from '../lib/sampling/drain-check.js';
import { bucketTimeline, failureKinds, phaseCounts } from '../lib/sampling/outcome-timeline.js';
import { summarizeLatencies } from '../lib/sampling/percentiles.js';
import { startProcessSampler, summarizeSeries, type ProcessSample, type SeriesSummary } from '../lib/sampling/process-sampler.js';
import type { SuiteExtras } from '../lib/options/suite-options.js';
import { formatTable } from '../lib/output/text-table.js';
import { runTimedLoad } from '../lib/load/timed-load.js';
import { drainTarget, timelineCsv } from './fault-report.js';
import { atMost, fmt, target, targetLines, writeScenarioOutput } from './scenario-output.js';
import { inferEcho, startSmallFleet } from './small-fleet.js';

export const DEFAULT_SOAK_MINUTES = 1;
export const QUICK_SOAK_MINUTES = 1 / 3;
const RATE = 100;
const QUICK_RATE = 50;
const HOT_SET = 64;
const MAX_ERROR_RATE = 0.001;
const MAX_RSS_SLOPE_MIB_PER_MIN = 2;
/** Shorter soaks report the RSS slope without judging it: their second half is still warm-up. */
const MIN_MINUTES_TO_JUDGE_RSS = 5;

const log = (message: string): void => void process.stderr.write(`[bench soak] ${message}\n`);

/** About 60 samples over the run, every 1 to 10 s. */
export function sampleIntervalMs(durationMs: number): number {
  return Math.min(10_000, Math.max(1000, Math.round(durationMs / 60 / 1000) * 1000));
}

export function soakMinutes(options: BenchOptions & SuiteExtras): number {
  return options.soakMinutes ?? (options.quick ? QUICK_SOAK_MINUTES : DEFAULT_SOAK_MINUTES);
}

export async function runSoakScenario(options: BenchOptions & SuiteExtras): Promise<number> {
  const started = new Date();
  const t0 = performance.now();
  const minutes = soakMinutes(options);
  const durationMs = Math.round(minutes * 60_000);
  const rate = options.quick ? QUICK_RATE : RATE;
  const intervalMs = sampleIntervalMs(durationMs);
  const work = await mkdtemp(join(tmpdir(), 'tessera-bench-soak-'));
  const fleet = await startSmallFleet(work, { cache: true }, log);
  const client = fleet.client(1024);
  try {
    log(`${rate} req/s for ${fmt(minutes, 2)} min, half cache hits; sampling /metrics every ${intervalMs / 1000} s`);
    const sampler = startProcessSampler(
      [
        { name: 'gateway', url: fleet.gatewayMetricsUrl, prefix: 'tessera_gateway_' },
        ...fleet.nodeIds.map((id) => ({ name: id, url: fleet.nodeMetricsUrls[id] as string, prefix: '' })),
      ],
      intervalMs,
    );
    const uniform = mulberry32(17);
    let unique = 1_000_000;
    const progress = setInterval(() => log(`${fmt((performance.now() - t0) / 60_000, 1)} min`), 60_000);
    let run;
    try {
      run = await runTimedLoad({
        ratePerSec: rate,
        durationMs,
        seed: 21,
        call: (seq) => inferEcho(client, uniform() < 0.5 ? (seq % HOT_SET) * 10 : unique++),
      });
    } finally {
      clearInterval(progress);
    }
    const series = await sampler.stop();
    const drain = await waitForDrain({ gatewayMetricsUrl: fleet.gatewayMetricsUrl, nodeMetricsUrls: fleet.nodeMetricsUrls, redisUrl: fleet.redis.url });
    const summaries: Record<string, SeriesSummary> = Object.fromEntries(Object.entries(series).map(([name, s]) => [name, summarizeSeries(s)]));
    const totals = phaseCounts(run.outcomes, 0, durationMs);
    const gateway = summaries.gateway;
    const figures = {
      ratePerSec: rate,
      minutes,
      sampleIntervalMs: intervalMs,
      totals,
      latency: summarizeLatencies(run.window.latenciesUs),
      dropped: run.window.dropped,
      failureKinds: failureKinds(run.outcomes),
      processes: summaries,
      series,
      drain,
      gatewayInflightExported: false,
    };
    const rssTarget = target(`gateway RSS slope (2nd half) <= ${MAX_RSS_SLOPE_MIB_PER_MIN} MiB/min`, gateway?.rssSlopeMiBPerMin ?? Number.NaN, MAX_RSS_SLOPE_MIB_PER_MIN, 'MiB/min', atMost,
      `${fmt(gateway?.rssSlopeMiBPerMin ?? Number.NaN, 2)} MiB/min; RSS ${fmt(gateway?.rssStartMiB ?? Number.NaN)} → ${fmt(gateway?.rssEndMiB ?? Number.NaN)} MiB, ` +
        `event-loop p99 median ${fmt(gateway?.lagP99MedianMs ?? Number.NaN)} ms, max ${fmt(gateway?.lagP99MaxMs ?? Number.NaN)} ms`);
    const targets = [
      drainTarget(drain),
      target('error rate <= 0.1%', totals.errorRate * 100, MAX_ERROR_RATE * 100, '%', atMost, `${totals.failed} of ${totals.ok + totals.failed} failed`),
      minutes >= MIN_MINUTES_TO_JUDGE_RSS
        ? rssTarget
        : { ...rssTarget, verdict: 'N/A' as const, detail: `${rssTarget.detail} (not judged: a soak under ${MIN_MINUTES_TO_JUDGE_RSS} min is still warming up)` },
    ];
    const elapsedS = (performance.now() - t0) / 1000;
    const minutesOf = (s: ProcessSample): number => s.tMs / 60_000;
    const buckets = bucketTimeline(run.outcomes, intervalMs, durationMs);
    const written = await writeScenarioOutput(options.outRoot, {
      scenario: 'soak',
      started,
      elapsedS,
      options: { quick: options.quick, minutes, ratePerSec: rate, hotSet: HOT_SET, sampleIntervalMs: intervalMs },
      figures,
      targets,
      notes: [
        'RSS and event-loop delay come from prom-client default metrics on each /metrics (gateway: tessera_gateway_ prefix).',
        'Event-loop p99 per sample covers the interval since the previous scrape (prom-client resets its histogram on collect).',
        'The gateway\'s per-node in-flight count is not exported as a metric; the drain check reads its queue depth, the nodes\' pending counts and load reports.',
      ],
      csv: timelineCsv(run.outcomes, intervalMs, durationMs),
      charts: {
        rss: {
          title: 'soak: resident memory',
          xLabel: 'time (min)',
          yLabel: 'RSS (MiB)',
          yFromZero: false,
          series: Object.entries(series).map(([name, s]) => ({ name, points: s.map((p) => ({ x: minutesOf(p), y: p.rssBytes / 2 ** 20 })) })),
        },
        eventloop: {
          title: 'soak: event-loop delay, p99 per sample interval',
          xLabel: 'time (min)',
          yLabel: 'p99 delay (ms)',
          series: Object.entries(series).map(([name, s]) => ({ name, points: s.map((p) => ({ x: minutesOf(p), y: p.lagP99Ms })) })),
        },
        throughput: {
          title: `soak: answers per second (${rate} req/s offered)`,
          xLabel: 'time (min)',
          yLabel: 'requests/s',
          series: [
            { name: 'ok/s', points: buckets.map((b) => ({ x: b.startMs / 60_000, y: b.okPerSec })) },
            { name: 'failed/s', points: buckets.map((b) => ({ x: b.startMs / 60_000, y: b.failedPerSec })) },
          ],
        },
      },
    });
    const table = formatTable(
      ['process', 'samples', 'RSS start MiB', 'RSS end MiB', 'RSS max MiB', 'slope MiB/min', 'heap end MiB', 'loop p99 med ms', 'loop p99 max ms'],
      Object.entries(summaries).map(([name, s]) => [
        name, String(s.samples - s.failedScrapes), fmt(s.rssStartMiB), fmt(s.rssEndMiB), fmt(s.rssMaxMiB), fmt(s.rssSlopeMiBPerMin, 2), fmt(s.heapEndMiB), fmt(s.lagP99MedianMs), fmt(s.lagP99MaxMs),
      ]),
    );
    process.stdout.write(
      [`soak: ${rate} req/s for ${fmt(minutes, 2)} min, ${totals.ok} ok, ${totals.failed} failed, p99 ${fmt(figures.latency.p99Us / 1000, 2)} ms, ${elapsedS.toFixed(0)} s total`,
        '', table, '', ...targetLines(targets), '', `results: ${written.json}`, ''].join('\n'),
    );
    return 0;
  } finally {
    await client.close();
    await fleet.close();
    await rm(work, { recursive: true, force: true });
  }
}
