/**
 * Memory and event-loop delay of the processes under test over time, read the way an operator would:
 * by scraping their Prometheus endpoints, where prom-client's default metrics expose
 *
 *   <prefix>process_resident_memory_bytes   RSS (Linux only: read from /proc)
 *   <prefix>nodejs_heap_size_used_bytes     V8 heap in use
 *   <prefix>nodejs_eventloop_lag_p99_seconds p99 of perf_hooks.monitorEventLoopDelay since the last
 *                                            scrape (prom-client resets the histogram on each collect,
 *                                            so every sample covers one sampling interval; nothing
 *                                            else may scrape meanwhile)
 *   <prefix>nodejs_eventloop_lag_seconds    the delay of one setImmediate at scrape time
 *
 * The gateway prefixes them `tessera_gateway_`; the node's metrics port has no prefix. A sample that
 * fails (a killed process) is recorded as NaN and counted, so the series keeps its time axis.
 */
import { scrapeMetrics, selectSamples, type PromSample } from './prom-text.js';

export interface ProcessFigures {
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly lagP99Ms: number;
  readonly lagMs: number;
}

export interface SamplerTarget {
  readonly name: string;
  readonly url: string;
  /** Prefix of prom-client's default metrics; '' when none. */
  readonly prefix: string;
}

export interface ProcessSample extends ProcessFigures {
  /** ms since the sampler started. */
  readonly tMs: number;
}

const first = (samples: readonly PromSample[], name: string): number => selectSamples(samples, name)[0]?.value ?? Number.NaN;

/** The default-metrics figures of one scrape; NaN where a metric is absent. */
export function processFigures(samples: readonly PromSample[], prefix: string): ProcessFigures {
  return {
    rssBytes: first(samples, `${prefix}process_resident_memory_bytes`),
    heapUsedBytes: first(samples, `${prefix}nodejs_heap_size_used_bytes`),
    lagP99Ms: first(samples, `${prefix}nodejs_eventloop_lag_p99_seconds`) * 1000,
    lagMs: first(samples, `${prefix}nodejs_eventloop_lag_seconds`) * 1000,
  };
}

export interface SeriesSummary {
  readonly samples: number;
  readonly failedScrapes: number;
  readonly rssStartMiB: number;
  readonly rssEndMiB: number;
  readonly rssMaxMiB: number;
  /** Least-squares slope of RSS over the second half of the run, MiB per minute (a leak keeps climbing; warm-up growth is in the first half). */
  readonly rssSlopeMiBPerMin: number;
  readonly heapEndMiB: number;
  readonly lagP99MaxMs: number;
  /** Median over the samples of the per-interval p99. */
  readonly lagP99MedianMs: number;
}

const MIB = 2 ** 20;

/** Least-squares slope of y over x; NaN with fewer than two points. */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den > 0 ? num / den : Number.NaN;
}

export function summarizeSeries(series: readonly ProcessSample[]): SeriesSummary {
  const ok = series.filter((s) => Number.isFinite(s.rssBytes));
  const rss = ok.map((s) => s.rssBytes / MIB);
  const secondHalf = ok.filter((s) => s.tMs >= (ok[ok.length - 1]?.tMs ?? 0) / 2);
  const lags = series.map((s) => s.lagP99Ms).filter(Number.isFinite).sort((a, b) => a - b);
  return {
    samples: series.length,
    failedScrapes: series.length - ok.length,
    rssStartMiB: rss[0] ?? Number.NaN,
    rssEndMiB: rss[rss.length - 1] ?? Number.NaN,
    rssMaxMiB: rss.length > 0 ? Math.max(...rss) : Number.NaN,
    rssSlopeMiBPerMin: slope(secondHalf.map((s) => ({ x: s.tMs / 60_000, y: s.rssBytes / MIB }))),
    heapEndMiB: (ok[ok.length - 1]?.heapUsedBytes ?? Number.NaN) / MIB,
    lagP99MaxMs: lags.length > 0 ? (lags[lags.length - 1] as number) : Number.NaN,
    lagP99MedianMs: lags.length > 0 ? (lags[Math.floor((lags.length - 1) / 2)] as number) : Number.NaN,
  };
}

export interface RunningSampler {
  /** Stops sampling (after a last sample) and returns each target's series. */
  stop(): Promise<Record<string, ProcessSample[]>>;
}

const NAN_FIGURES: ProcessFigures = { rssBytes: Number.NaN, heapUsedBytes: Number.NaN, lagP99Ms: Number.NaN, lagMs: Number.NaN };

/** Scrapes every target now and then every `intervalMs` (default 5000) until stopped. */
export function startProcessSampler(targets: readonly SamplerTarget[], intervalMs = 5000): RunningSampler {
  const t0 = performance.now();
  const series: Record<string, ProcessSample[]> = Object.fromEntries(targets.map((t) => [t.name, []]));
  const sampleAll = async (): Promise<void> => {
    const tMs = performance.now() - t0;
    await Promise.all(
      targets.map(async (target) => {
        let figures = NAN_FIGURES;
        try {
          figures = processFigures(await scrapeMetrics(target.url), target.prefix);
        } catch {
          // recorded as NaN: the process may be gone, which the scenario reports itself
        }
        series[target.name]?.push({ tMs, ...figures });
      }),
    );
  };
  let busy: Promise<void> = sampleAll();
  // Samples never overlap: a slow scrape delays the next one instead of piling up.
  const timer = setInterval(() => {
    busy = busy.then(sampleAll);
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await busy;
      await sampleAll();
      return series;
    },
  };
}
