/**
 * The mlp_large server setups the batching scenario compares, as config.pbtxt text. Every setup names
 * its thread count explicitly (instead of leaving it to the backend's cores/instances default) so the
 * ceiling can be measured with the very same intra-op threads.
 *
 * Candidates, each using all cores in total:
 * - `full-batch`: preferred size 64 (= max_batch_size) and a 10 ms delay. Under closed-loop load the
 *   clients answered by one batch return within a few ms; waiting for all of them makes every
 *   execution a full one, which the ceiling shows is where this model's throughput is.
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
}

export const MLP_MODEL = 'mlp_large';
export const MLP_MAX_BATCH = 64;
export const MLP_INPUT = 'INPUT0';
export const MLP_OUTPUT = 'OUTPUT0';
export const MLP_WIDTH = 1024;

export function batchingCandidates(cores: number): MlpSetup[] {
  const one = (id: string, preferredBatchSizes: number[], maxQueueDelayUs: number): MlpSetup => ({
    id,
    instances: 1,
    intraOpThreads: cores,
    dynamicBatching: { preferredBatchSizes, maxQueueDelayUs },
  });
  const candidates: MlpSetup[] = [
    one('full-batch', [MLP_MAX_BATCH], 10_000),
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
  return `${lines.join('\n')}\n`;
}
