/**
 * A Backend for tests: instances echo their first input under each config output name, and a test can
 * hold executions at a gate to observe queueing, in-flight work and ordering without timing.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Tensor } from '../../../../shared/src/tensors/index.js';
import type {
  Backend,
  BackendInstance,
  ExecutionBatchResult,
  ExecutionRequest,
  InstanceSpec,
  ModelSource,
} from '../../../src/backends/backend.js';

export interface HeldExecution {
  readonly model: string;
  readonly version: number;
  readonly instance: string;
  readonly requests: readonly ExecutionRequest[];
  release(): void;
  fail(error: Error): void;
}

export class FakeBackend implements Backend {
  readonly defaultModelFilename = 'model.fake';
  /** While true, executions wait in `held` until released. */
  gate = false;
  readonly held: HeldExecution[] = [];
  /** Every execution started, in order. */
  readonly executed: { model: string; version: number; instance: string; requests: readonly ExecutionRequest[] }[] = [];
  readonly created: { model: string; version: number; instance: string; modelDir: string }[] = [];
  readonly closed: { model: string; version: number; instance: string }[] = [];
  /** Makes createInstance fail for a model (message returned) — e.g. to break one version's load. */
  failCreate?: (source: ModelSource) => string | undefined;
  /** While true, createInstance waits in `heldCreates` until released. */
  holdCreates = false;
  readonly heldCreates: { source: ModelSource; release: () => void }[] = [];
  private waiters: (() => void)[] = [];

  constructor(readonly name = 'fake') {}

  async createInstance(source: ModelSource, spec: InstanceSpec): Promise<BackendInstance> {
    if (this.holdCreates) {
      await new Promise<void>((release) => {
        this.heldCreates.push({ source, release });
        this.notify();
      });
    }
    const failure = this.failCreate?.(source);
    if (failure) throw TesseraError.invalidArg(failure);
    const id = { model: source.name, version: source.version, instance: spec.name };
    this.created.push({ ...id, modelDir: source.modelDir });
    return {
      spec,
      execute: (requests) => this.execute(source, spec, requests),
      close: async () => {
        this.closed.push(id);
        this.notify();
      },
    };
  }

  /** Resolves once `count` executions are held at the gate. */
  waitForHeld(count: number): Promise<void> {
    return this.until(() => this.held.length >= count);
  }

  /** Resolves once `predicate` holds, re-checked at every backend event (no polling, no sleeps). */
  async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Whether an instance of this model version was closed. */
  isClosed(model: string, version: number): boolean {
    return this.closed.some((c) => c.model === model && c.version === version);
  }

  private notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  releaseAll(): void {
    for (const execution of this.held.splice(0)) execution.release();
  }

  private async execute(
    source: ModelSource,
    spec: InstanceSpec,
    requests: readonly ExecutionRequest[],
  ): Promise<ExecutionBatchResult> {
    this.executed.push({ model: source.name, version: source.version, instance: spec.name, requests });
    if (this.gate) {
      await new Promise<void>((resolve, reject) => {
        this.held.push({
          model: source.name,
          version: source.version,
          instance: spec.name,
          requests,
          release: resolve,
          fail: reject,
        });
        this.notify();
      });
    }
    return {
      results: requests.map((request) => {
        const first = request.inputs[0];
        if (!first) return { error: TesseraError.invalidArg('fake backend needs an input') };
        const names = request.requestedOutputs.length
          ? request.requestedOutputs
          : source.config.output.map((output) => output.name);
        const outputs: Tensor[] = names.map((name) => ({ ...first, name }));
        return { outputs };
      }),
      timing: { computeInputNs: 1_000, computeInferNs: 5_000, computeOutputNs: 2_000 },
    };
  }
}
