/**
 * Test doubles for the sequence batcher: an instance whose executions finish only when the test says
 * so, recording every batch, and computing a running sum as a stateful model would (OUTPUT = STATE +
 * INPUT, STATE_OUT = the same), plus a config and a request builder for it.
 */
import { fromText } from '@bufbuild/protobuf/txtpb';
import { ModelConfigSchema, type ModelConfig } from '../../../shared/src/gen/model_config_pb.js';
import type { Tensor } from '../../../shared/src/tensors/index.js';
import type { BackendInstance, ExecutionBatchResult, ExecutionRequest, ExecutionResult } from '../../src/backends/backend.js';
import type { ScheduledRequest } from '../../src/scheduler/scheduler.js';

export function fp32(name: string, values: readonly number[], shape: readonly number[] = [1, values.length]): Tensor {
  return { name, datatype: 'FP32', shape, data: new Uint8Array(Float32Array.from(values).buffer) };
}

export function floats(tensor: Tensor | undefined): number[] {
  if (tensor === undefined) throw new Error('no such tensor');
  const copy = tensor.data.slice();
  return [...new Float32Array(copy.buffer, 0, copy.byteLength / 4)];
}

export function input(request: ExecutionRequest, name: string): Tensor | undefined {
  return request.inputs.find((t) => t.name === name);
}

/** A control's value: INT32 controls as numbers, a UINT64 CORRID as a bigint. */
export function control(request: ExecutionRequest, name: string): number | bigint {
  const tensor = input(request, name);
  if (tensor === undefined) throw new Error(`no control ${name}`);
  const view = new DataView(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  return tensor.datatype === 'UINT64' ? view.getBigUint64(0, true) : view.getInt32(0, true);
}

type Answer = (request: ExecutionRequest) => ExecutionResult;

/** OUTPUT = STATE + INPUT and STATE_OUT = the same: a running sum per sequence. */
export const runningSum: Answer = (request) => {
  const sum = (floats(input(request, 'STATE'))[0] ?? NaN) + (floats(input(request, 'INPUT'))[0] ?? NaN);
  return { outputs: [fp32('OUTPUT', [sum]), fp32('STATE_OUT', [sum])] };
};

export class FakeStatefulInstance implements BackendInstance {
  readonly batches: ExecutionRequest[][] = [];
  private readonly pending: { requests: readonly ExecutionRequest[]; resolve: (r: ExecutionBatchResult) => void }[] = [];

  constructor(readonly name = 'fake_0') {}

  get spec() {
    return { name: this.name, groupName: 'fake', kind: 'cpu' as const, device: -1, auto: false };
  }

  execute(requests: readonly ExecutionRequest[]): Promise<ExecutionBatchResult> {
    this.batches.push([...requests]);
    return new Promise((resolve) => this.pending.push({ requests, resolve }));
  }

  get running(): number {
    return this.pending.length;
  }

  /** Finishes the oldest running batch, answering each request with `answer`. */
  complete(answer: Answer = runningSum): void {
    const run = this.pending.shift();
    if (run === undefined) throw new Error('no execution is running');
    run.resolve({
      results: run.requests.map(answer),
      timing: { computeInputNs: 1, computeInferNs: 1, computeOutputNs: 1 },
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

export interface ConfigSpec {
  readonly maxBatchSize?: number;
  readonly idleUs?: number;
  /** Text inside `sequence_batching { }` choosing the strategy; default `direct { }`. */
  readonly strategy?: string;
  readonly corridType?: string;
  /** Text of the state's initial_state; default zero data. */
  readonly initialState?: string;
}

export function accumulatorConfig(spec: ConfigSpec = {}): ModelConfig {
  return fromText(
    ModelConfigSchema,
    `name: "acc"
backend: "fake"
max_batch_size: ${spec.maxBatchSize ?? 4}
input [{ name: "INPUT" data_type: TYPE_FP32 dims: [ 1 ] }]
output [{ name: "OUTPUT" data_type: TYPE_FP32 dims: [ 1 ] }]
sequence_batching {
  max_sequence_idle_microseconds: ${spec.idleUs ?? 1000}
  ${spec.strategy ?? 'direct { }'}
  control_input [
    { name: "START" control [{ kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] }] },
    { name: "END" control [{ kind: CONTROL_SEQUENCE_END int32_false_true: [ 0, 1 ] }] },
    { name: "READY" control [{ kind: CONTROL_SEQUENCE_READY int32_false_true: [ 0, 1 ] }] },
    { name: "CORRID" control [{ kind: CONTROL_SEQUENCE_CORRID data_type: ${spec.corridType ?? 'TYPE_UINT64'} }] }
  ]
  state [{
    input_name: "STATE" output_name: "STATE_OUT" data_type: TYPE_FP32 dims: [ 1 ]
    initial_state: { ${spec.initialState ?? 'data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "zero"'} }
  }]
}
`,
  );
}

export interface RequestSpec {
  readonly start?: boolean;
  readonly end?: boolean;
  readonly batchSize?: number;
  readonly signal?: AbortSignal;
}

/** A request of sequence `id` carrying INPUT = [x]. */
export function seqRequest(id: number | string | bigint, x: number, spec: RequestSpec = {}): ScheduledRequest {
  const batchSize = spec.batchSize ?? 1;
  return {
    id: `${String(id)}:${x}`,
    batchSize,
    execution: {
      inputs: [fp32('INPUT', Array.from({ length: batchSize }, () => x), [batchSize, 1])],
      requestedOutputs: [],
      parameters: {
        sequence_id: id,
        ...(spec.start ? { sequence_start: true } : {}),
        ...(spec.end ? { sequence_end: true } : {}),
      },
    },
    ...(spec.signal === undefined ? {} : { signal: spec.signal }),
  };
}
