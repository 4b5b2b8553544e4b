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

/**
 * Composing models that add 1 to INPUT0, recording the order they ran in. A `decoupled` one instead
 * streams INPUT0 + 1, + 2, + 3 (the last flagged final), pausing between responses and stopping when
 * its signal fires (recorded in `sawAbort`).
 */
function fakeModels(names: string[], hooks: { beforeRun?: (name: string) => void; decoupled?: string[] } = {}) {
  const ran: string[] = [];
  const sawAbort: string[] = [];
  const configs = new Map(names.map((n) => [n, model(n, ['INPUT0'], ['OUTPUT0'])]));
  const config = (name: string) => {
    const found = configs.get(name);
    if (!found) throw TesseraError.notFound(`Request for unknown model: '${name}' is not found`);
    return found;
  };
  const composing: ComposingModels = {
    config,
    decoupled: (name) => config(name) !== undefined && (hooks.decoupled ?? []).includes(name),
    infer: async (request: InferRequest, signal?: AbortSignal, onResponse?): Promise<InferResponse> => {
      hooks.beforeRun?.(request.modelName);
      const input = value(request.inputs.find((i) => i.name === 'INPUT0')) ?? 0;
      const answer = (outputs: Tensor[]): InferResponse => ({ id: request.id, modelName: request.modelName, modelVersion: '1', outputs });
      if ((hooks.decoupled ?? []).includes(request.modelName)) {
        if (!onResponse) throw TesseraError.unsupported('decoupled model called without a listener');
        for (let i = 1; i <= 3; i++) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          if (signal?.aborted) {
            sawAbort.push(request.modelName);
            throw TesseraError.cancelled('Request was cancelled');
          }
          onResponse(answer([tensor('OUTPUT0', input + i)]), i === 3);
        }
        ran.push(request.modelName);
        return answer([]);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
      ran.push(request.modelName);
      return answer([tensor('OUTPUT0', input + 1)]);
    },
  };
  return { composing, ran, sawAbort };
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

describe('EnsembleScheduler with a decoupled last step', () => {
  const streamed = (signal?: AbortSignal) => {
    const responses: [number | undefined, boolean][] = [];
    return {
      responses,
      request: {
        ...request(signal),
        execution: { ...request(signal).execution, onResponse: (outputs: readonly Tensor[], final: boolean) => responses.push([value(outputs.find((t) => t.name === 'OUT')), final]) },
      },
    };
  };

  it('is decoupled and sends each response of the last step as the ensemble output, final flag kept', async () => {
    const { composing, ran } = fakeModels(['first', 'second'], { decoupled: ['second'] });
    const scheduler = createEnsembleScheduler(chain, composing);
    expect(scheduler.decoupled).toBe(true);
    const { responses, request: r } = streamed();
    const { result } = await scheduler.enqueue(r);
    expect(ran).toEqual(['first', 'second']);
    expect(responses).toEqual([[12, false], [13, false], [14, true]]);
    expect(result).toEqual({ outputs: [] });
  });

  it('a cancelled request reaches the running decoupled step, which stops', async () => {
    const controller = new AbortController();
    const { composing, sawAbort } = fakeModels(['first', 'second'], { decoupled: ['second'] });
    const scheduler = createEnsembleScheduler(chain, composing);
    const { responses, request: r } = streamed(controller.signal);
    const running = scheduler.enqueue({ ...r, execution: { ...r.execution, onResponse: (o, f) => { r.execution.onResponse(o, f); controller.abort(); } } });
    await expect(running).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(responses).toEqual([[12, false]]);
    expect(sawAbort).toEqual(['second']);
    expect(scheduler.inflight()).toBe(0);
  });

  it('refuses at load a decoupled model that is not the last step, naming the step', () => {
    const { composing } = fakeModels(['first', 'second'], { decoupled: ['first'] });
    expect(() => createEnsembleScheduler(chain, composing)).toThrow(
      /step 1 \('first'\) is a decoupled model, which Tessera supports only as the last step of an ensemble, but step 0 \('second'\) read\(s\) its outputs/,
    );
  });

  it('refuses a decoupled step that does not write every ensemble output, and two decoupled steps', () => {
    const { composing } = fakeModels(['first', 'second'], { decoupled: ['first', 'second'] });
    const split = ensemble(
      [
        { model: 'first', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'OUT' } },
        { model: 'second', inputs: { INPUT0: 'IN' }, outputs: { OUTPUT0: 'OTHER' } },
      ],
      ['OUT', 'OTHER'],
    );
    expect(() => planEnsemble(split, composing)).toThrow(/step 0 \('first'\), step 1 \('second'\) are decoupled: an ensemble may contain one decoupled model/);
    expect(() => planEnsemble(split, composing)).toThrow(/step 0 \('first'\) is a decoupled model, so it must write every output of the ensemble, but 'OTHER' come\(s\) from other steps/);
  });

  it('a last step reloaded as a non-decoupled model since: its one answer goes out as the final response', async () => {
    const decoupled = ['second'];
    const { composing } = fakeModels(['first', 'second'], { decoupled });
    const scheduler = createEnsembleScheduler(chain, composing);
    decoupled.pop();
    const { responses, request: r } = streamed();
    await scheduler.enqueue(r);
    expect(responses).toEqual([[12, true]]);
  });

  it('a non-decoupled ensemble is not decoupled', () => {
    const { composing } = fakeModels(['first', 'second']);
    expect(createEnsembleScheduler(chain, composing).decoupled).toBe(false);
  });
});

describe('optional ensemble inputs', () => {
  const withOptional = (required: boolean) => {
    const config = ensemble([{ model: 'first', inputs: { INPUT0: 'IN', EXTRA: 'OPT' }, outputs: { OUTPUT0: 'OUT' } }]);
    config.input.push({ ...config.input[0], name: 'OPT', optional: true } as (typeof config.input)[number]);
    const first = model('first', ['INPUT0', 'EXTRA'], ['OUTPUT0']);
    (first.input[1] as { optional: boolean }).optional = !required;
    return { config, first };
  };

  it('a step runs without an optional input the request left out', async () => {
    const { config, first } = withOptional(false);
    const { composing } = fakeModels(['first']);
    const seen: string[][] = [];
    const scheduler = createEnsembleScheduler(config, {
      ...composing,
      config: () => first,
      infer: (r, s) => {
        seen.push(r.inputs.map((i) => i.name));
        return composing.infer(r, s);
      },
    });
    const { result } = await scheduler.enqueue(request());
    expect(seen).toEqual([['INPUT0']]);
    expect('outputs' in result && result.outputs.map((t) => [t.name, value(t)])).toEqual([['OUT', 11]]);
  });

  it('refuses an optional ensemble input mapped to a required input', () => {
    const { config, first } = withOptional(true);
    const { composing } = fakeModels(['first']);
    expect(() => planEnsemble(config, { ...composing, config: () => first })).toThrow(
      /step 0 \('first'\) maps the optional ensemble input 'OPT' to 'EXTRA', which model 'first' requires/,
    );
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
