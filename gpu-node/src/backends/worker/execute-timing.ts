/**
 * Turning a worker's own timings (WorkerTimings, in every reply body) into an instance's
 * ExecutionTiming, the same way for every worker-thread backend.
 */
import type { ExecutionTiming } from '../backend.js';
import type { WorkerTimings } from './protocol.js';

export function elapsedNs(since: bigint): number {
  return Number(process.hrtime.bigint() - since);
}

/** A batch that never got a reply: all of its time counts as compute_input. */
export function failedExecuteTiming(start: bigint): ExecutionTiming {
  return { computeInputNs: elapsedNs(start), computeInferNs: 0, computeOutputNs: 0 };
}

/**
 * compute_infer is the model's own work in the worker; compute_output is the worker's output conversion
 * plus what the host did since the reply arrived at `received`; compute_input is everything else
 * (host-side preparation, transfer both ways, the worker's input conversion).
 */
export function executeTiming(start: bigint, received: bigint, worker: WorkerTimings): ExecutionTiming {
  const computeOutputNs = worker.outputNs + elapsedNs(received);
  return {
    computeInputNs: Math.max(0, elapsedNs(start) - worker.inferNs - computeOutputNs),
    computeInferNs: worker.inferNs,
    computeOutputNs,
  };
}
