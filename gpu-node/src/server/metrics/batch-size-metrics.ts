/**
 * `tessera_inference_batch_size` (ours, not Triton's): a histogram of executed batch sizes (batch
 * elements per execution) per model version, buckets 1, 2, 4, ..., 128. Like the nv_* families it
 * is built at scrape time from the stats snapshot, whose per-size execution counts are the
 * statistics extension's batch_stats, so the two never disagree and an unloaded version's series go.
 *
 * prom-client's Histogram can only be fed one observation at a time, and replaying every execution
 * at each scrape would cost O(executions); this subclass instead serves bucket counts computed from
 * the snapshot (the registry reads `getForPromString` for the text format and `get` for JSON).
 */
import { Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { FIRST_RESPONSE_BUCKETS_MS, type ModelStatsSnapshot } from '../../models/model-stats.js';

export const BATCH_SIZE_METRIC = 'tessera_inference_batch_size';
export const BATCH_SIZE_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128];

const HELP = 'Batch size (batch elements) of each model execution.';

// `le` is in the type only: the bucket label of the values served below, never a configured label.
type Label = 'model' | 'version' | 'le';
type Exposition = Awaited<ReturnType<Histogram<Label>['get']>>;

/** One model version's histogram: cumulative counts per bucket bound (in `buckets` order), count and sum. */
export interface HistogramValues {
  readonly cumulative: readonly number[];
  readonly count: number;
  readonly sum: number;
}

/** A histogram family per model version whose values are computed from the stats snapshot at scrape time. */
export interface SnapshotHistogramSpec {
  readonly name: string;
  readonly help: string;
  readonly buckets: readonly number[];
  /** Undefined leaves the version out of this family. */
  values(snapshot: ModelStatsSnapshot): HistogramValues | undefined;
}

export class SnapshotHistogram extends Histogram<Label> {
  constructor(
    registry: Registry,
    private readonly snapshots: () => readonly ModelStatsSnapshot[],
    private readonly spec: SnapshotHistogramSpec,
  ) {
    super({
      name: spec.name,
      help: spec.help,
      labelNames: ['model', 'version'],
      buckets: [...spec.buckets],
      registers: [registry],
    });
  }

  override get(): Promise<Exposition> {
    return Promise.resolve(this.exposition());
  }

  /** Read by the registry for the text format in place of prom-client's own. */
  getForPromString(): Promise<Exposition> {
    return Promise.resolve(this.exposition());
  }

  private exposition(): Exposition {
    const name = this.spec.name;
    const values: Exposition['values'] = [];
    for (const s of this.snapshots()) {
      const histogram = this.spec.values(s);
      if (histogram === undefined) continue;
      const labels = { model: s.model, version: s.version };
      this.spec.buckets.forEach((le, i) => {
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: histogram.cumulative[i] ?? 0 });
      });
      values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: histogram.count });
      values.push({ metricName: `${name}_sum`, labels, value: histogram.sum });
      values.push({ metricName: `${name}_count`, labels, value: histogram.count });
    }
    return {
      name,
      help: this.spec.help,
      // prom-client's typings declare a numeric enum; at run time (and in the exposition) it is this string.
      type: 'histogram' as unknown as Exposition['type'],
      aggregator: 'sum',
      values,
      collect: () => undefined,
    };
  }
}

/** Registers the histogram on `registry`; `snapshots` is read at every scrape. */
export function registerBatchSizeMetrics(registry: Registry, snapshots: () => readonly ModelStatsSnapshot[]): void {
  new SnapshotHistogram(registry, snapshots, {
    name: BATCH_SIZE_METRIC,
    help: HELP,
    buckets: BATCH_SIZE_BUCKETS,
    values(s) {
      let count = 0;
      let sum = 0;
      for (const { batchSize, executions } of s.batchSizes) {
        count += executions;
        sum += batchSize * executions;
      }
      const cumulative = BATCH_SIZE_BUCKETS.map((le) =>
        s.batchSizes.reduce((n, b) => n + (b.batchSize <= le ? b.executions : 0), 0),
      );
      return { cumulative, count, sum };
    },
  });
}

export const FIRST_RESPONSE_METRIC = 'nv_inference_first_response_histogram_ms';

/**
 * Triton's `nv_inference_first_response_histogram_ms` (default buckets 100, 500, 2000, 5000 ms): time
 * to a request's first response, most telling for decoupled models. Triton exports it only under
 * `--metrics-config histogram_latencies=true`; Tessera always does.
 */
export function registerFirstResponseMetrics(registry: Registry, snapshots: () => readonly ModelStatsSnapshot[]): void {
  new SnapshotHistogram(registry, snapshots, {
    name: FIRST_RESPONSE_METRIC,
    help: 'Duration from request to first response in milliseconds',
    buckets: FIRST_RESPONSE_BUCKETS_MS,
    values: (s) => (s.firstResponse === undefined ? undefined : { cumulative: s.firstResponse.buckets, count: s.firstResponse.count, sum: s.firstResponse.sumMs }),
  });
}
