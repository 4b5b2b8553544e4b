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
import type { ModelStatsSnapshot } from '../../models/model-stats.js';

export const BATCH_SIZE_METRIC = 'tessera_inference_batch_size';
export const BATCH_SIZE_BUCKETS: readonly number[] = [1, 2, 4, 8, 16, 32, 64, 128];

const HELP = 'Batch size (batch elements) of each model execution.';

// `le` is in the type only: the bucket label of the values served below, never a configured label.
type Label = 'model' | 'version' | 'le';
type Exposition = Awaited<ReturnType<Histogram<Label>['get']>>;

class SnapshotHistogram extends Histogram<Label> {
  constructor(
    registry: Registry,
    private readonly snapshots: () => readonly ModelStatsSnapshot[],
  ) {
    super({
      name: BATCH_SIZE_METRIC,
      help: HELP,
      labelNames: ['model', 'version'],
      buckets: [...BATCH_SIZE_BUCKETS],
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
    const values: Exposition['values'] = [];
    for (const s of this.snapshots()) {
      const labels = { model: s.model, version: s.version };
      let count = 0;
      let sum = 0;
      for (const { batchSize, executions } of s.batchSizes) {
        count += executions;
        sum += batchSize * executions;
      }
      for (const le of BATCH_SIZE_BUCKETS) {
        const below = s.batchSizes.reduce((n, b) => n + (b.batchSize <= le ? b.executions : 0), 0);
        values.push({ metricName: `${BATCH_SIZE_METRIC}_bucket`, labels: { ...labels, le }, value: below });
      }
      values.push({ metricName: `${BATCH_SIZE_METRIC}_bucket`, labels: { ...labels, le: '+Inf' }, value: count });
      values.push({ metricName: `${BATCH_SIZE_METRIC}_sum`, labels, value: sum });
      values.push({ metricName: `${BATCH_SIZE_METRIC}_count`, labels, value: count });
    }
    return {
      name: BATCH_SIZE_METRIC,
      help: HELP,
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
  new SnapshotHistogram(registry, snapshots);
}
