/**
 * The mlp_large server setups the batching scenario compares, as config.pbtxt text. Every setup names
 * its thread count explicitly (instead of leaving it to the backend's cores/instances default) so the
 * ceiling can be measured with the very same intra-op threads.
 *
 * Candidates, each using all cores in total:
 * - `full-batch`: preferred size 64 (= max_batch_size) and a queue delay of twice the ceiling's time
 *   for one batch of 64. Under a closed loop of 64 callers every execution is then a full one, which
 *   the ceiling shows is where this model's throughput is. The delay must outlast one execution plus
 *   the round trip of its answers: with a shorter one, callers that arrive during an execution see
 *   their delay expire before the others come back, run as a partial batch, and the two groups stay
 *   out of step for good (batches alternating, e.g., 40 and 24), which is what 10 ms did here.
 * - `greedy`: `dynamic_batching {}` with no delay: take whatever is queued when the instance frees up
 *   (Triton's advice for a first config). Under closed-loop load batches then alternate between the
 *   clients queued during an execution and those answered by it.
 * - `preferred`: preferred sizes 32/64 and a 5 ms delay: runs as soon as 32 are queued.
 * - `two-instances`: two instances with half the threads each, preferred 32/64, 5 ms delay: overlaps
 *   one batch's input/output handling with the other's compute, at the cost of fewer threads per GEMM.
 * The unbatched setup is the chosen one with the dynamic_batching block removed: same instances,
 * same threads, the default scheduler.
 */

export interface DynamicBatching {
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayUs: number;
}

export interface MlpSetup {
  readonly id: string;
  readonly instances: number;
  readonly intraOpThreads: number;
  /** Absent: no dynamic_batching block, the default scheduler. */
  readonly dynamicBatching?: DynamicBatching;
  /** Tessera's `queue_delay_from_idle` parameter (gpu-node/src/scheduler/dynamic/batcher-options.ts). */
  readonly queueDelayFromIdle?: boolean;
}

export const MLP_MODEL = 'mlp_large';
export const MLP_MAX_BATCH = 64;
export const MLP_INPUT = 'INPUT0';
export const MLP_OUTPUT = 'OUTPUT0';
export const MLP_WIDTH = 1024;

/** The full-batch delay when the ceiling's time for a batch of 64 is `fullBatchExecUs`, whole ms. */
export function fullBatchDelayUs(fullBatchExecUs: number): number {
  const twice = Number.isFinite(fullBatchExecUs) && fullBatchExecUs > 0 ? 2 * fullBatchExecUs : 10_000;
  return Math.max(10_000, Math.ceil(twice / 1000) * 1000);
}

/**
 * @param fullBatchExecUs the ceiling's time for one run at max_batch_size (sets full-batch's delay)
 */
export function batchingCandidates(cores: number, fullBatchExecUs = Number.NaN): MlpSetup[] {
  const one = (id: string, preferredBatchSizes: number[], maxQueueDelayUs: number): MlpSetup => ({
    id,
    instances: 1,
    intraOpThreads: cores,
    dynamicBatching: { preferredBatchSizes, maxQueueDelayUs },
  });
  const candidates: MlpSetup[] = [
    one('full-batch', [MLP_MAX_BATCH], fullBatchDelayUs(fullBatchExecUs)),
    one('greedy', [], 0),
    one('preferred', [32, MLP_MAX_BATCH], 5_000),
  ];
  if (cores >= 2) {
    candidates.push({
      id: 'two-instances',
      instances: 2,
      intraOpThreads: Math.floor(cores / 2),
      dynamicBatching: { preferredBatchSizes: [32, MLP_MAX_BATCH], maxQueueDelayUs: 5_000 },
    });
  }
  return candidates;
}

export function withoutBatching(setup: MlpSetup): MlpSetup {
  return { id: `${setup.id}-unbatched`, instances: setup.instances, intraOpThreads: setup.intraOpThreads };
}

export function mlpConfigText(setup: MlpSetup): string {
  const lines = [
    `name: "${MLP_MODEL}"`,
    'platform: "onnxruntime_onnx"',
    `max_batch_size: ${MLP_MAX_BATCH}`,
    `input [ { name: "${MLP_INPUT}" data_type: TYPE_FP32 dims: [ ${MLP_WIDTH} ] } ]`,
    `output [ { name: "${MLP_OUTPUT}" data_type: TYPE_FP32 dims: [ ${MLP_WIDTH} ] } ]`,
    `instance_group [ { count: ${setup.instances} kind: KIND_CPU } ]`,
  ];
  const db = setup.dynamicBatching;
  if (db !== undefined) {
    const preferred = db.preferredBatchSizes.length > 0 ? `preferred_batch_size: [ ${db.preferredBatchSizes.join(', ')} ] ` : '';
    lines.push(`dynamic_batching { ${preferred}max_queue_delay_microseconds: ${db.maxQueueDelayUs} }`);
  }
  lines.push(`parameters { key: "intra_op_thread_count" value: { string_value: "${setup.intraOpThreads}" } }`);
  if (setup.queueDelayFromIdle === true) lines.push('parameters { key: "queue_delay_from_idle" value: { string_value: "true" } }');
  return `${lines.join('\n')}\n`;
}
