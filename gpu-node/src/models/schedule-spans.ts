/**
 * The `queue` and `compute` spans of one request, made after the fact from the scheduler's timings
 * (ScheduledResult: queueNs, and the execution's compute input/infer/output ns) with explicit start
 * and end times: the scheduler and the backends stay free of tracing, and a batch's one execution
 * shows as a `compute` span in each request it carried (as Triton's statistics count it).
 *
 *   queue   [enqueue, enqueue + queueNs]
 *   compute [end of queue, + computeInput + computeInfer + computeOutput]
 */
import type { TraceScope } from '../../../shared/src/tracing/index.js';
import type { ScheduledResult } from '../scheduler/scheduler.js';

/** Wall clock in ms since the epoch with sub-ms precision (spans need better than Date.now()). */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

export function recordScheduleSpans(
  trace: TraceScope,
  enqueuedAtMs: number,
  scheduled: ScheduledResult,
  attributes: { readonly model: string; readonly version: string; readonly batchSize: number },
): void {
  const { tracer, parent } = trace;
  if (!tracer.enabled) return;
  const common = { 'tessera.model': attributes.model, 'tessera.model_version': attributes.version, 'tessera.batch_size': attributes.batchSize };
  const queueEnd = enqueuedAtMs + scheduled.queueNs / 1e6;
  tracer.startSpan('queue', { parent, startTime: enqueuedAtMs, attributes: common }).end(queueEnd);
  const { computeInputNs, computeInferNs, computeOutputNs } = scheduled.timing;
  const compute = tracer.startSpan('compute', {
    parent,
    startTime: queueEnd,
    attributes: { ...common, 'tessera.compute_input_ns': computeInputNs, 'tessera.compute_infer_ns': computeInferNs, 'tessera.compute_output_ns': computeOutputNs },
  });
  if ('error' in scheduled.result) compute.setError(scheduled.result.error);
  compute.end(queueEnd + (computeInputNs + computeInferNs + computeOutputNs) / 1e6);
}
