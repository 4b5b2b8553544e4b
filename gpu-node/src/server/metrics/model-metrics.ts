/**
 * Triton's per-model `nv_inference_*` families (section 5.3), labelled `model` and `version`.
 * Values are copied from the stats source at scrape time rather than counted here a second time, so
 * /metrics and the statistics extension can never disagree.
 */
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
// model-stats.js directly, not the models index: the exporter needs two names, not the whole loader graph.
import { FAILURE_REASONS } from '../../models/model-stats.js';
import type { ModelStatsSnapshot } from '../../models/model-stats.js';
import { registerBatchSizeMetrics, registerFirstResponseMetrics } from './batch-size-metrics.js';
import type { InstanceSnapshot } from '../../models/instance-snapshot.js';

/** What the exporter needs of the node: `TesseraNodeCore` provides it. */
export interface MetricsSource {
  statsSnapshots(): readonly ModelStatsSnapshot[];
  /** Where each instance runs (tessera_model_instance_info); the family is left out when absent. */
  instanceSnapshots?(): readonly InstanceSnapshot[];
}

type CounterField = {
  [K in keyof ModelStatsSnapshot]: ModelStatsSnapshot[K] extends number ? K : never;
}[keyof ModelStatsSnapshot];

const COUNTERS: readonly { name: string; help: string; field: CounterField }[] = [
  { name: 'nv_inference_request_success', help: 'Number of successful inference requests, all batch sizes', field: 'requestSuccess' },
  { name: 'nv_inference_count', help: 'Number of inferences performed (does not include cached requests)', field: 'inferenceCount' },
  { name: 'nv_inference_exec_count', help: 'Number of model executions performed (does not include cached requests)', field: 'executionCount' },
  { name: 'nv_inference_request_duration_us', help: 'Cumulative inference request duration in microseconds (includes cached requests)', field: 'requestDurationUs' },
  { name: 'nv_inference_queue_duration_us', help: 'Cumulative inference queuing duration in microseconds (includes cached requests)', field: 'queueDurationUs' },
  { name: 'nv_inference_compute_input_duration_us', help: 'Cumulative compute input duration in microseconds (does not include cached requests)', field: 'computeInputDurationUs' },
  { name: 'nv_inference_compute_infer_duration_us', help: 'Cumulative compute inference duration in microseconds (does not include cached requests)', field: 'computeInferDurationUs' },
  { name: 'nv_inference_compute_output_duration_us', help: 'Cumulative inference compute output duration in microseconds (does not include cached requests)', field: 'computeOutputDurationUs' },
];

/** Tessera has no response cache yet; Triton's per-model cache families are exported at 0 so dashboards resolve. */
const CACHE_COUNTERS: readonly { name: string; help: string }[] = [
  { name: 'nv_cache_num_hits_per_model', help: 'Number of cache hits per model' },
  { name: 'nv_cache_num_misses_per_model', help: 'Number of cache misses per model' },
  { name: 'nv_cache_hit_duration_per_model', help: 'Total cache hit duration per model, in microseconds' },
  { name: 'nv_cache_miss_duration_per_model', help: 'Total cache miss (insertion) duration per model, in microseconds' },
];

const MODEL_LABELS = ['model', 'version'] as const;

function labelsOf(s: ModelStatsSnapshot): { model: string; version: string } {
  return { model: s.model, version: s.version };
}

/**
 * Registers the families on `registry`. One `statsSnapshots()` call serves a whole scrape:
 * `registry.metrics()` calls every collect() synchronously one after another, so a snapshot kept
 * until the next microtask is shared by all of them and every family describes the same instant.
 */
export function registerModelMetrics(registry: Registry, source: MetricsSource): void {
  let current: readonly ModelStatsSnapshot[] | undefined;
  const snapshots = (): readonly ModelStatsSnapshot[] => {
    if (current === undefined) {
      current = source.statsSnapshots();
      queueMicrotask(() => (current = undefined));
    }
    return current;
  };

  for (const { name, help, field } of COUNTERS) {
    new Counter({
      name,
      help,
      labelNames: MODEL_LABELS,
      registers: [registry],
      collect() {
        // Mirror the source's monotonic totals; reset drops the series of unloaded versions, as Triton does.
        this.reset();
        for (const s of snapshots()) this.inc(labelsOf(s), s[field]);
      },
    });
  }

  new Counter({
    name: 'nv_inference_request_failure',
    help: 'Number of failed inference requests, all batch sizes',
    labelNames: [...MODEL_LABELS, 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const s of snapshots()) {
        for (const reason of FAILURE_REASONS) this.inc({ ...labelsOf(s), reason }, s.requestFailure[reason]);
      }
    },
  });

  new Gauge({
    name: 'nv_inference_pending_request_count',
    help: 'Instantaneous number of pending requests awaiting execution per-model.',
    labelNames: MODEL_LABELS,
    registers: [registry],
    collect() {
      this.reset();
      for (const s of snapshots()) this.set(labelsOf(s), s.pendingRequests);
    },
  });

  registerBatchSizeMetrics(registry, snapshots);
  registerFirstResponseMetrics(registry, snapshots);

  for (const { name, help } of CACHE_COUNTERS) {
    new Counter({
      name,
      help,
      labelNames: MODEL_LABELS,
      registers: [registry],
      collect() {
        this.reset();
        for (const s of snapshots()) this.inc(labelsOf(s), 0);
      },
    });
  }
}
