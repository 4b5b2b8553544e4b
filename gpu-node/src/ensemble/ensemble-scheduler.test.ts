/**
 * The ensemble scheduler and plan against fake composing models: dataflow order, cancellation checked
 * between steps, load-time checks, and draining on stop. The end-to-end suite (gpu-node/test/
 * composite/ensemble.test.ts) runs real models; these pin down what is awkward to provoke there.
 */
import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { DataType, ModelConfigSchema, type ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { InferRequest, InferResponse, Tensor } from '../../../shared/src/tensors/index.js';
import type { ComposingModels } from './composing-models.js';
import { planEnsemble } from './ensemble-plan.js';
import { createEnsembleScheduler } from './ensemble-scheduler.js';

const fp32 = { dataType: DataType.TYPE_FP32, dims: [-1n] };

function model(name: string, inputs: string[], outputs: string[], maxBatchSize = 8): ModelConfig {
  return create(ModelConfigSchema, {
    name,
    backend: 'typescript',
    maxBatchSize,
    input: inputs.map((n) => ({ name: n, ...fp32 })),
    output: outputs.map((n) => ({ name: n, ...fp32 })),
  });
}

function ensemble(steps: { model: string; inputs: Record<string, string>; outputs: Record<string, string> }[], outputs = ['OUT']): ModelConfig {
  return create(ModelConfigSchema, {
    name: 'e',
    platform: 'ensemble',
    maxBatchSize: 8,
    input: [{ name: 'IN', ...fp32 }],
    output: outputs.map((n) => ({ name: n, ...fp32 })),
    schedulingChoice: {
      case: 'ensembleScheduling',
      value: { step: steps.map((s) => ({ modelName: s.model, modelVersion: -1n, inputMap: s.inputs, outputMap: s.outputs })) },
    },
  });
}

const tensor = (name: string, value: number): Tensor => ({
  name,
  datatype: 'FP32',
  shape: [1, 1],
  data: new Uint8Array(new Float32Array([value]).buffer),
});
const value = (t: Tensor | undefined) => new Float32Array(t?.data.slice().buffer ?? new ArrayBuffer(4))[0];

/** Composing models that add 1 to INPUT0, recording the order they ran in. */
function fakeModels(names: string[], hooks: { beforeRun?: (name: string) => void } = {}) {
  const ran: string[] = [];
  const configs = new Map(names.map((n) => [n, model(n, ['INPUT0'], ['OUTPUT0'])]));
  const composing: ComposingModels = {
    config: (name) => {
      const found = configs.get(name);
      if (!found) throw TesseraError.notFound(`Request for unknown model: '${name}' is not found`);
      return found;
    },
    infer: async (request: InferRequest): Promise<InferResponse> => {
      hooks.beforeRun?.(request.modelName);
      await new Promise((resolve) => setTimeout(resolve, 5));
      ran.push(request.modelName);
      const input = request.inputs.find((i) => i.name === 'INPUT0');
      return { id: request.id, modelName: request.modelName, modelVersion: '1', outputs: [tensor('OUTPUT0', (value(input) ?? 0) + 1)] };
    },
  };
  return { composing, ran };
}

const chain = ensemble([
  // Listed out of order on purpose: the dataflow decides, not the list.
  { model: 'second', inputs: { INPUT0: 'mid' }, outputs: { OUTPUT0: 'OUT' } },
  { model: 'first', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'mid' } },
]);

const request = (signal?: AbortSignal) => ({
  execution: { inputs: [tensor('IN', 10)], requestedOutputs: [], parameters: {} },
  batchSize: 1,
  id: 'r1',
  ...(signal === undefined ? {} : { signal }),
});

describe('EnsembleScheduler', () => {
  it('runs steps in dataflow order and returns the ensemble outputs', async () => {
    const { composing, ran } = fakeModels(['first', 'second']);
    const scheduler = createEnsembleScheduler(chain, composing);
    const { result } = await scheduler.enqueue(request());
    expect(ran).toEqual(['first', 'second']);
    expect('outputs' in result && result.outputs.map((t) => [t.name, value(t)])).toEqual([['OUT', 12]]);
  });

  it('stops between steps when the request is cancelled', async () => {
    const controller = new AbortController();
    const { composing, ran } = fakeModels(['first', 'second'], {
      beforeRun: (name) => {
        if (name === 'first') controller.abort();
      },
    });
    const scheduler = createEnsembleScheduler(chain, composing);
    await expect(scheduler.enqueue(request(controller.signal))).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(ran).toEqual(['first']);
    expect(scheduler.inflight()).toBe(0);
  });

  it('stop() waits for requests in flight, then refuses new ones', async () => {
    const { composing } = fakeModels(['first', 'second']);
    const scheduler = createEnsembleScheduler(chain, composing);
    const running = scheduler.enqueue(request());
    const stopped = scheduler.stop();
    expect(scheduler.inflight()).toBe(1);
    await expect(running).resolves.toBeDefined();
    await stopped;
    await expect(scheduler.enqueue(request())).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});

describe('planEnsemble', () => {
  it('names a missing composing model', () => {
    const { composing } = fakeModels(['first']);
    expect(() => planEnsemble(chain, composing)).toThrow(/step 0 \('second'\) needs model 'second', which is not available/);
  });

  it('rejects steps that can never run (a cycle)', () => {
    const { composing } = fakeModels(['first', 'loop_a', 'loop_b']);
    const cyclic = ensemble([
      { model: 'first', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'OUT' } },
      { model: 'loop_a', inputs: { INPUT0: 'p' }, outputs: { OUTPUT0: 'q' } },
      { model: 'loop_b', inputs: { INPUT0: 'q' }, outputs: { OUTPUT0: 'p' } },
    ]);
    expect(() => planEnsemble(cyclic, composing)).toThrow(/step 1 \('loop_a'\), step 2 \('loop_b'\) can never run/);
  });

  it('rejects a batch size larger than a composing model allows, and inconsistent data types', () => {
    const { composing } = fakeModels(['first', 'second']);
    const small = { ...composing, config: (name: string) => (name === 'first' ? model('first', ['INPUT0'], ['OUTPUT0'], 2) : composing.config(name)) };
    expect(() => planEnsemble(chain, small)).toThrow(/ensemble e allows maximum batch size 8, but it contains model first which only allows maximum batch size to be 2/);
    const secondInt32 = model('second', ['INPUT0'], ['OUTPUT0']);
    (secondInt32.input[0] as { dataType: DataType }).dataType = DataType.TYPE_INT32;
    const int = { ...composing, config: (name: string) => (name === 'second' ? secondInt32 : composing.config(name)) };
    expect(() => planEnsemble(chain, int)).toThrow(/ensemble tensor 'mid' has inconsistent data type: TYPE_INT32 is inferred from input 'INPUT0' of model 'second' while TYPE_FP32/);
  });
});
