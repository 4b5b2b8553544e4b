/**
 * Triton's ensemble scheduler (section 4.6) as this node's Scheduler for `platform: "ensemble"`. It
 * owns no instances and no queue: each request is a small dataflow run over the ensemble's tensors.
 * A step is sent to its composing model (through the node's own infer, so the composing model's
 * scheduler batches it with everything else) as soon as all of its inputs exist; steps whose inputs
 * are ready at the same time run concurrently. The first failing step fails the request, named; a
 * cancelled request is checked before each step starts and stops there (steps already sent get the
 * signal too, so their queued work is dropped).
 *
 * When the last step is a decoupled model (ensemble-plan.ts says when that is allowed), the ensemble is
 * decoupled: each response of that step, renamed to the ensemble's outputs, is sent on as the
 * ensemble's own with the step's final flag, and the request completes when the step does. The
 * client's signal reaches the running step, so a client that goes away stops the streaming model.
 */
import { TesseraError, toTesseraError } from '../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { InferRequest, InferResponse, Tensor } from '../../../shared/src/tensors/index.js';
import type { ExecutionTiming } from '../backends/backend.js';
import { abortReasonError, schedulerError } from '../scheduler/scheduler-errors.js';
import {
  REQUEST_CANCELLED_MESSAGE,
  SCHEDULER_STOPPED_MESSAGE,
  type ScheduledRequest,
  type ScheduledResult,
  type Scheduler,
} from '../scheduler/scheduler.js';
import type { ComposingModels } from './composing-models.js';
import { planEnsemble, type EnsemblePlan, type PlannedStep } from './ensemble-plan.js';

/** An ensemble computes nothing itself: its compute time is in the composing models' statistics. */
const NO_COMPUTE: ExecutionTiming = { computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 };

/** Checks the ensemble against its composing models (throws INVALID_ARG, failing the load) and builds its scheduler. */
export function createEnsembleScheduler(config: ModelConfig, composing: ComposingModels | undefined): EnsembleScheduler {
  if (!composing) throw TesseraError.internal(`ensemble '${config.name}' cannot reach its composing models`);
  return new EnsembleScheduler(planEnsemble(config, composing), composing);
}

export class EnsembleScheduler implements Scheduler {
  private running = 0;
  private stopped = false;
  private drained: (() => void)[] = [];

  constructor(
    readonly plan: EnsemblePlan,
    private readonly composing: ComposingModels,
  ) {}

  /** Decoupled when its last step is: the ensemble then streams that step's responses. */
  get decoupled(): boolean {
    return this.plan.streamingStep !== undefined;
  }

  async enqueue(request: ScheduledRequest): Promise<ScheduledResult> {
    if (this.stopped) throw schedulerError(TesseraError.unavailable(SCHEDULER_STOPPED_MESSAGE));
    this.running += 1;
    try {
      const outputs = await runEnsemble(this.plan, this.composing, request);
      return { result: { outputs }, queueNs: 0, timing: NO_COMPUTE };
    } catch (error) {
      const failure = toTesseraError(error);
      // A cancellation is the caller's to count (CANCELED); a failed step is the ensemble's result.
      if (failure.code === 'CANCELLED') throw failure;
      return { result: { error: failure }, queueNs: 0, timing: NO_COMPUTE };
    } finally {
      this.running -= 1;
      if (this.running === 0) this.drained.splice(0).forEach((resolve) => resolve());
    }
  }

  inflight(): number {
    return this.running;
  }

  /** Steps wait in the composing models' queues, which count them; the ensemble itself queues nothing. */
  queued(): number {
    return 0;
  }

  stop(): Promise<void> {
    this.stopped = true;
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }
}

/** Runs every step whose inputs become available; resolves with the ensemble's outputs. */
function runEnsemble(plan: EnsemblePlan, composing: ComposingModels, request: ScheduledRequest): Promise<Tensor[]> {
  const tensors = new Map<string, Tensor>(request.execution.inputs.map((input) => [input.name, input]));
  const waiting = new Set(plan.steps);
  const signal = request.signal;
  let running = 0;
  let settled = false;

  return new Promise<Tensor[]>((resolve, reject) => {
    const fail = (error: TesseraError) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    const advance = () => {
      if (settled) return;
      for (const step of waiting) {
        if (!step.inputs.every(([, tensor]) => tensors.has(tensor) || plan.optionalInputs.has(tensor))) continue;
        if (signal?.aborted) {
          fail(abortReasonError(signal, REQUEST_CANCELLED_MESSAGE));
          return;
        }
        waiting.delete(step);
        running += 1;
        runStep(plan, step, composing, request, tensors).then(
          (produced) => {
            running -= 1;
            for (const tensor of produced) tensors.set(tensor.name, tensor);
            advance();
          },
          (error: unknown) => {
            running -= 1;
            // A step that failed because the client went away is a cancellation, not a step failure.
            fail(signal?.aborted ? abortReasonError(signal, REQUEST_CANCELLED_MESSAGE) : stepFailure(plan, step, error));
          },
        );
      }
      if (running > 0 || settled) return;
      // Nothing runs and nothing more can start: every reachable step has finished.
      if (plan.streamingStep !== undefined) {
        // The outputs went out with the streaming step's responses; completing says it is over.
        settled = true;
        resolve([]);
        return;
      }
      const missing = plan.outputs.filter((name) => !tensors.has(name));
      if (missing.length > 0) {
        fail(TesseraError.internal(`in ensemble '${plan.name}', no step produced output(s) ${missing.map((n) => `'${n}'`).join(', ')}`));
        return;
      }
      settled = true;
      resolve(plan.outputs.map((name) => tensors.get(name) as Tensor));
    };
    advance();
  });
}

/** One step: its inputs renamed to the composing model's names, its outputs renamed back. */
async function runStep(
  plan: EnsemblePlan,
  step: PlannedStep,
  composing: ComposingModels,
  request: ScheduledRequest,
  tensors: ReadonlyMap<string, Tensor>,
): Promise<Tensor[]> {
  // An optional ensemble input the request left out is left out of the step too.
  const inputs = step.inputs.flatMap(([name, tensor]) => {
    const given = tensors.get(tensor);
    return given === undefined ? [] : [{ ...given, name }];
  });
  const stepRequest: InferRequest = {
    id: request.id ?? '',
    modelName: step.modelName,
    ...(step.modelVersion === undefined ? {} : { modelVersion: step.modelVersion }),
    inputs,
    outputs: step.outputs.map(([name]) => ({ name })),
    parameters: request.execution.parameters,
  };
  if (step.decoupled) {
    const send = request.execution.onResponse;
    if (send === undefined) throw TesseraError.internal(`ensemble '${plan.name}' is decoupled but its caller takes one response`);
    // A response may carry only some outputs (or none: the bare final flag); each is renamed as it goes.
    const forward = (response: InferResponse, final: boolean) => send(ensembleOutputs(step, response, false), final);
    const response = await composing.infer(stepRequest, request.signal, forward);
    // The model was reloaded as a non-decoupled version since the ensemble loaded: its one answer is the last response.
    if (response.outputs.length > 0) send(ensembleOutputs(step, response, true), true);
    return [];
  }
  const response = await composing.infer(stepRequest, request.signal);
  return ensembleOutputs(step, response, true);
}

/** A step's outputs renamed to their ensemble tensors; with `complete`, every mapped output must be there. */
function ensembleOutputs(step: PlannedStep, response: InferResponse, complete: boolean): Tensor[] {
  const byName = new Map(response.outputs.map((output) => [output.name, output]));
  return step.outputs.flatMap(([name, tensor]) => {
    const output = byName.get(name);
    if (output) return [{ ...output, name: tensor }];
    if (complete) throw TesseraError.internal(`model '${step.modelName}' returned no output '${name}'`);
    return [];
  });
}

/** The step's own error, with its code kept (a composing model's 400 stays a 400), naming the step. */
function stepFailure(plan: EnsemblePlan, step: PlannedStep, error: unknown): TesseraError {
  const cause = toTesseraError(error);
  return new TesseraError(
    cause.code,
    `in ensemble '${plan.name}', step ${step.index} ('${step.modelName}') failed: ${cause.message}`,
    { cause },
  );
}
