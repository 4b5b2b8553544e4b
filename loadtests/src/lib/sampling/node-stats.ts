/**
 * Server-side figures of a measurement window: two snapshots of the statistics API
 * (`GET /v2/models/{m}/stats`, Triton's JSON) and their difference. Read over the wire, like
 * perf_analyzer does, rather than from the node's internals, so the bench measures what clients see.
 *
 * Per Triton's rules the `inference_stats` durations are per request (a batched request carries the
 * compute time of the execution it rode in), so `ns / count` of a delta is the average per request.
 */

interface DurationStat {
  readonly count: number;
  readonly ns: number;
}

/** The part of one `model_stats` entry the bench uses. */
export interface ModelStatsSnapshot {
  readonly inference_count: number;
  readonly execution_count: number;
  readonly inference_stats: {
    readonly success: DurationStat;
    readonly fail: DurationStat;
    readonly queue: DurationStat;
    readonly compute_input: DurationStat;
    readonly compute_infer: DurationStat;
    readonly compute_output: DurationStat;
  };
}

export interface StatsDelta {
  readonly requests: number;
  readonly failures: number;
  /** Batch elements executed (inference_count delta). */
  readonly inferences: number;
  readonly executions: number;
  /** inferences / executions; NaN when nothing executed. */
  readonly avgBatchSize: number;
  /** Averages per successful request, in microseconds. */
  readonly requestUs: number;
  readonly queueUs: number;
  readonly computeInputUs: number;
  readonly computeInferUs: number;
  readonly computeOutputUs: number;
}

function averageUs(before: DurationStat, after: DurationStat): number {
  const count = after.count - before.count;
  return count > 0 ? (after.ns - before.ns) / count / 1000 : Number.NaN;
}

export function statsDelta(before: ModelStatsSnapshot, after: ModelStatsSnapshot): StatsDelta {
  const b = before.inference_stats;
  const a = after.inference_stats;
  const inferences = after.inference_count - before.inference_count;
  const executions = after.execution_count - before.execution_count;
  return {
    requests: a.success.count - b.success.count,
    failures: a.fail.count - b.fail.count,
    inferences,
    executions,
    avgBatchSize: executions > 0 ? inferences / executions : Number.NaN,
    requestUs: averageUs(b.success, a.success),
    queueUs: averageUs(b.queue, a.queue),
    computeInputUs: averageUs(b.compute_input, a.compute_input),
    computeInferUs: averageUs(b.compute_infer, a.compute_infer),
    computeOutputUs: averageUs(b.compute_output, a.compute_output),
  };
}

/**
 * The model's statistics, summed over its versions (the bench loads one version). `headers` go on the
 * request (an API key, when the statistics are read through the gateway).
 */
export async function fetchModelStats(
  httpBase: string,
  model: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<ModelStatsSnapshot> {
  const response = await fetch(`${httpBase}/v2/models/${encodeURIComponent(model)}/stats`, { headers });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET stats of '${model}': HTTP ${response.status}: ${text}`);
  const entries = (JSON.parse(text) as { model_stats?: ModelStatsSnapshot[] }).model_stats ?? [];
  return sumEntries(entries, model);
}

/** Sums the entries of one model's versions; throws when there are none. */
export function sumEntries(entries: readonly ModelStatsSnapshot[], model: string): ModelStatsSnapshot {
  if (entries.length === 0) throw new Error(`stats of '${model}': no model_stats entry`);
  return entries.reduce(addSnapshots);
}

function addDuration(x: DurationStat, y: DurationStat): DurationStat {
  return { count: x.count + y.count, ns: x.ns + y.ns };
}

function addSnapshots(x: ModelStatsSnapshot, y: ModelStatsSnapshot): ModelStatsSnapshot {
  const a = x.inference_stats;
  const b = y.inference_stats;
  return {
    inference_count: x.inference_count + y.inference_count,
    execution_count: x.execution_count + y.execution_count,
    inference_stats: {
      success: addDuration(a.success, b.success),
      fail: addDuration(a.fail, b.fail),
      queue: addDuration(a.queue, b.queue),
      compute_input: addDuration(a.compute_input, b.compute_input),
      compute_infer: addDuration(a.compute_infer, b.compute_infer),
      compute_output: addDuration(a.compute_output, b.compute_output),
    },
  };
}
