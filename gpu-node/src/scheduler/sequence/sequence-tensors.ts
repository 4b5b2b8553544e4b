/**
 * The tensors the sequence batcher adds to and takes from a request, invisible to the client: control
 * inputs (START, END, READY, CORRID), the implicit state fed in, the state output taken back out, and
 * the null requests that pad empty slots of a direct batch.
 *
 * Every injected tensor is one batch element: shape [1, ...] when the model batches (the backend then
 * concatenates the batch's requests along dim 0, keeping each sequence in its row), [...] when not.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { encodeBytesElements, formatShape, type Tensor } from '../../../../shared/src/tensors/index.js';
import type { ExecutionRequest, ExecutionResult } from '../../backends/backend.js';
import { formatCorrelationId, type CorrelationId } from './correlation-id.js';
import type { ControlSpec, SequenceSettings, StateSpec } from './sequence-settings.js';

export interface ControlFlags {
  readonly start: boolean;
  readonly end: boolean;
  readonly ready: boolean;
  /** undefined for a null request (CORRID 0 or ""). */
  readonly id: CorrelationId | undefined;
}

/** Current implicit state of one sequence, by state input name, with the batch dimension when batching. */
export type SequenceStates = ReadonlyMap<string, Tensor>;

function withBatch(settings: SequenceSettings, shape: readonly number[]): number[] {
  return settings.batching ? [1, ...shape] : [...shape];
}

/**
 * The CORRID control's element. Triton: a string ID needs TYPE_STRING, a numeric one an integer type;
 * 32-bit types keep the low 32 bits.
 */
function corridData(control: ControlSpec, id: CorrelationId | undefined, modelName: string): Uint8Array {
  if (control.datatype === 'BYTES') {
    if (typeof id === 'bigint') {
      throw TesseraError.invalidArg(
        `sequence ${formatCorrelationId(id)} to model '${modelName}' has a numeric correlation ID, but its CORRID control '${control.tensor}' is TYPE_STRING`,
      );
    }
    return encodeBytesElements([id ?? '']);
  }
  if (typeof id === 'string') {
    throw TesseraError.invalidArg(
      `sequence ${id} to model '${modelName}' has a string correlation ID, but its CORRID control '${control.tensor}' needs an integer ID`,
    );
  }
  const value = id ?? 0n;
  const wide = control.datatype === 'UINT64' || control.datatype === 'INT64';
  const data = new Uint8Array(wide ? 8 : 4);
  const view = new DataView(data.buffer);
  if (wide) view.setBigUint64(0, value, true);
  else view.setUint32(0, Number(value & 0xffff_ffffn), true);
  return data;
}

/** Throws INVALID_ARG when the ID's type does not fit the model's CORRID control (checked at enqueue). */
export function checkCorrelationIdType(settings: SequenceSettings, id: CorrelationId): void {
  for (const control of settings.controls) if (control.kind === 'corrid') corridData(control, id, settings.modelName);
}

export function controlTensors(settings: SequenceSettings, flags: ControlFlags): Tensor[] {
  return settings.controls.map((control) => {
    const data =
      control.kind === 'corrid'
        ? corridData(control, flags.id, settings.modelName)
        : (control.values as readonly [Uint8Array, Uint8Array])[flags[control.kind] ? 1 : 0];
    return { name: control.tensor, datatype: control.datatype, shape: withBatch(settings, [1]), data };
  });
}

/** The states a sequence starts with (fresh copies: a backend may take ownership of input buffers). */
export function initialStates(settings: SequenceSettings): SequenceStates {
  return new Map(
    settings.states.map((state) => [
      state.inputName,
      {
        name: state.inputName,
        datatype: state.datatype,
        shape: withBatch(settings, state.initialShape),
        data: state.initialData.slice(),
      },
    ]),
  );
}

/**
 * What the instance executes for one real request: the client's inputs plus controls and states, and
 * the state outputs added to the requested outputs (when the client named any; none means all).
 */
export function sequenceExecution(
  settings: SequenceSettings,
  execution: ExecutionRequest,
  flags: ControlFlags,
  states: SequenceStates,
): ExecutionRequest {
  const requested = execution.requestedOutputs;
  const stateOutputs = settings.states.map((s) => s.outputName).filter((name) => !requested.includes(name));
  return {
    inputs: [...execution.inputs, ...controlTensors(settings, flags), ...states.values()],
    requestedOutputs: requested.length === 0 ? [] : [...requested, ...stateOutputs],
    parameters: execution.parameters,
    // A decoupled sequence model streams its responses and sees its client go away like any other.
    ...(execution.signal === undefined ? {} : { signal: execution.signal }),
    ...(execution.onResponse === undefined ? {} : { onResponse: execution.onResponse }),
  };
}

/**
 * A null request for an empty slot of a direct batch: the template's inputs with zeroed data (so the
 * backend can concatenate it), READY false, CORRID 0, and the initial state. Its result is dropped.
 */
export function nullExecution(settings: SequenceSettings, template: ExecutionRequest): ExecutionRequest {
  const stateNames = new Set(settings.states.map((s) => s.inputName));
  const controlNames = new Set(settings.controls.map((c) => c.tensor));
  const clientInputs = template.inputs.filter((t) => !stateNames.has(t.name) && !controlNames.has(t.name));
  return {
    inputs: [
      ...clientInputs.map((t) => ({ ...t, data: new Uint8Array(t.data.byteLength) })),
      ...controlTensors(settings, { start: false, end: false, ready: false, id: undefined }),
      ...initialStates(settings).values(),
    ],
    requestedOutputs: template.requestedOutputs,
    parameters: {},
  };
}

function stateShapeFits(settings: SequenceSettings, spec: StateSpec, tensor: Tensor): boolean {
  const want = withBatch(settings, spec.dims);
  return tensor.shape.length === want.length && want.every((d, i) => d === -1 || d === tensor.shape[i]);
}

export interface TakenStates {
  /** The result the client gets: state outputs removed, or an error. */
  readonly result: ExecutionResult;
  /** The next request's states; undefined when the result was an error. */
  readonly states?: SequenceStates;
}

/**
 * Splits a request's result into what the client sees and the sequence's next state. A state output
 * that is missing or does not have the declared datatype and dims fails the request with a clear error
 * (and leaves the sequence's state as it was), rather than feeding garbage to the next request.
 */
export function takeStates(settings: SequenceSettings, result: ExecutionResult, id: CorrelationId): TakenStates {
  if ('error' in result || settings.states.length === 0) return { result };
  const next = new Map<string, Tensor>();
  for (const spec of settings.states) {
    const output = result.outputs.find((o) => o.name === spec.outputName);
    const what = `state output '${spec.outputName}' of model '${settings.modelName}' for sequence ${formatCorrelationId(id)}`;
    if (output === undefined) {
      return { result: { error: TesseraError.internal(`${what} is missing from the model's outputs`) } };
    }
    if (output.datatype !== spec.datatype || !stateShapeFits(settings, spec, output)) {
      return {
        result: {
          error: TesseraError.invalidArg(
            `${what} has datatype ${output.datatype} and shape ${formatShape(output.shape)}, but state '${spec.inputName}' ` +
              `is declared as ${spec.datatype} ${formatShape(withBatch(settings, spec.dims))}`,
          ),
        },
      };
    }
    next.set(spec.inputName, { ...output, name: spec.inputName });
  }
  const hidden = new Set(settings.states.map((s) => s.outputName));
  return { result: { outputs: result.outputs.filter((o) => !hidden.has(o.name)) }, states: next };
}
