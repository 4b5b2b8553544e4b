/**
 * What the sequence batcher needs from `sequence_batching`, read once at load: the strategy and its
 * knobs, the control tensors to inject (with their false/true values already encoded), and the implicit
 * states with their initial values. Config errors a load must report (a state whose initial value does
 * not fit its dims, an initial_state data file of the wrong size) are thrown here as INVALID_ARG.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import {
  DataType,
  ModelSequenceBatching_Control_Kind as Kind,
  type ModelConfig,
  type ModelSequenceBatching,
  type ModelSequenceBatching_Control,
  type ModelSequenceBatching_State,
} from '../../../../shared/src/gen/model_config_pb.js';
import { configTypeToDatatype, datatypeByteSize, formatShape, type Datatype } from '../../../../shared/src/tensors/index.js';

export type ControlKind = 'start' | 'end' | 'ready' | 'corrid';

export interface ControlSpec {
  readonly kind: ControlKind;
  /** The model input the control is fed to. */
  readonly tensor: string;
  readonly datatype: Datatype;
  /** START/END/READY: one element's bytes for false and for true. Absent for CORRID. */
  readonly values?: readonly [Uint8Array, Uint8Array];
}

export interface StateSpec {
  readonly inputName: string;
  readonly outputName: string;
  readonly datatype: Datatype;
  /** The state's dims without the batch dimension (-1 = any size). */
  readonly dims: readonly number[];
  /** The first request's state: shape (no batch dimension) and bytes. */
  readonly initialShape: readonly number[];
  readonly initialData: Uint8Array;
}

export interface SequenceSettings {
  readonly modelName: string;
  /** max_batch_size > 0: every injected tensor gets a leading batch dimension of 1. */
  readonly batching: boolean;
  readonly maxBatchSize: number;
  readonly strategy: 'direct' | 'oldest';
  /** Triton's seq_slot_cnt: max(1, max_batch_size) for direct, max_candidate_sequences for oldest. */
  readonly slotsPerInstance: number;
  /** max_sequence_idle_microseconds (0 in the config means 1 s). */
  readonly idleUs: number;
  /** direct: max_queue_delay_microseconds; oldest: its own max_queue_delay_microseconds. */
  readonly maxQueueDelayUs: number;
  /** direct only: wait for this fraction of the slots to be ready (with a delay); 0 = never wait. */
  readonly minimumSlotUtilization: number;
  /** oldest only: preferred batch sizes (empty = max_batch_size). */
  readonly preferredBatchSizes: readonly number[];
  readonly controls: readonly ControlSpec[];
  readonly states: readonly StateSpec[];
}

export interface SequenceSettingsOptions {
  /** `<repository>/<model>`: where `initial_state/<data_file>` lives. Needed only for data_file states. */
  readonly modelDir?: string;
}

const DEFAULT_IDLE_US = 1_000_000;

const KIND_NAMES: Record<Kind, ControlKind> = {
  [Kind.CONTROL_SEQUENCE_START]: 'start',
  [Kind.CONTROL_SEQUENCE_END]: 'end',
  [Kind.CONTROL_SEQUENCE_READY]: 'ready',
  [Kind.CONTROL_SEQUENCE_CORRID]: 'corrid',
};

function datatypeOf(dataType: DataType, what: string): Datatype {
  const datatype = configTypeToDatatype(DataType[dataType] ?? '');
  if (datatype === null) throw TesseraError.invalidArg(`${what} has no valid data_type`);
  return datatype;
}

/** The false/true pair of a boolean control, as one element's bytes each. */
function controlValues(control: ModelSequenceBatching_Control, what: string): { datatype: Datatype; values: [Uint8Array, Uint8Array] } {
  const pair = <T>(list: readonly T[], encode: (v: T) => Uint8Array): [Uint8Array, Uint8Array] => {
    if (list.length !== 2) throw TesseraError.invalidArg(`${what} needs exactly 2 entries in '*_false_true'`);
    return [encode(list[0] as T), encode(list[1] as T)];
  };
  if (control.int32FalseTrue.length > 0) {
    return { datatype: 'INT32', values: pair(control.int32FalseTrue, (v) => new Uint8Array(Int32Array.of(v).buffer)) };
  }
  if (control.fp32FalseTrue.length > 0) {
    return { datatype: 'FP32', values: pair(control.fp32FalseTrue, (v) => new Uint8Array(Float32Array.of(v).buffer)) };
  }
  if (control.boolFalseTrue.length > 0) {
    return { datatype: 'BOOL', values: pair(control.boolFalseTrue, (v) => Uint8Array.of(v ? 1 : 0)) };
  }
  throw TesseraError.invalidArg(`${what} must specify either 'int32_false_true', 'fp32_false_true' or 'bool_false_true'`);
}

function readControls(sequence: ModelSequenceBatching, modelName: string): ControlSpec[] {
  const controls: ControlSpec[] = [];
  for (const input of sequence.controlInput) {
    for (const control of input.control) {
      const kind = KIND_NAMES[control.kind];
      const what = `control '${input.name}' of model '${modelName}'`;
      if (kind === 'corrid') controls.push({ kind, tensor: input.name, datatype: datatypeOf(control.dataType, what) });
      else controls.push({ kind, tensor: input.name, ...controlValues(control, what) });
    }
  }
  return controls;
}

function readState(state: ModelSequenceBatching_State, modelName: string, options: SequenceSettingsOptions): StateSpec {
  const what = `state '${state.inputName}' of model '${modelName}'`;
  const datatype = datatypeOf(state.dataType, what);
  const dims = state.dims.map(Number);
  const initial = state.initialState[0];
  if (state.initialState.length > 1) throw TesseraError.invalidArg(`${what} specifies more than one initial_state`);
  // Without initial_state Triton starts from whatever the buffer held; zeros is the honest version of that.
  const initialShape = initial === undefined ? dims : initial.dims.map(Number);
  if (initialShape.some((d) => d < 0)) {
    throw TesseraError.invalidArg(`${what} has variable dims ${formatShape(dims)}: its initial_state must give concrete dims`);
  }
  const fits = initialShape.length === dims.length && dims.every((d, i) => d === -1 || d === initialShape[i]);
  if (!fits) {
    throw TesseraError.invalidArg(`${what}: initial_state dims ${formatShape(initialShape)} do not match the state dims ${formatShape(dims)}`);
  }
  if (initial !== undefined && datatypeOf(initial.dataType, `initial_state of ${what}`) !== datatype) {
    throw TesseraError.invalidArg(`${what}: initial_state data_type differs from the state's data_type`);
  }
  const elementSize = datatypeByteSize(datatype);
  if (elementSize === null) throw TesseraError.unsupported(`${what}: BYTES states are not supported`);
  const byteSize = initialShape.reduce((a, b) => a * b, 1) * elementSize;
  let initialData = new Uint8Array(byteSize);
  if (initial?.stateData.case === 'dataFile') {
    if (options.modelDir === undefined) {
      throw TesseraError.invalidArg(`${what}: initial_state data_file needs the model directory, which the scheduler was not given`);
    }
    const path = join(options.modelDir, 'initial_state', initial.stateData.value);
    initialData = new Uint8Array(readFileSync(path));
    if (initialData.byteLength !== byteSize) {
      throw TesseraError.invalidArg(
        `${what}: initial_state data_file '${path}' holds ${initialData.byteLength} bytes, dims ${formatShape(initialShape)} need ${byteSize}`,
      );
    }
  }
  return { inputName: state.inputName, outputName: state.outputName, datatype, dims, initialShape, initialData };
}

export function sequenceSettingsFromConfig(config: ModelConfig, options: SequenceSettingsOptions = {}): SequenceSettings {
  if (config.schedulingChoice.case !== 'sequenceBatching') {
    throw TesseraError.internal(`model '${config.name}' has no sequence_batching`);
  }
  const sequence = config.schedulingChoice.value;
  const strategy = sequence.strategyChoice;
  const maxBatchSize = config.maxBatchSize;
  const oldest = strategy.case === 'oldest' ? strategy.value : undefined;
  const direct = strategy.case === 'direct' ? strategy.value : undefined;
  const candidates = oldest?.maxCandidateSequences ?? 0;
  return {
    modelName: config.name,
    batching: maxBatchSize > 0,
    maxBatchSize,
    // direct is the default when the config names no strategy.
    strategy: oldest === undefined ? 'direct' : 'oldest',
    slotsPerInstance: candidates > 0 ? candidates : Math.max(1, maxBatchSize),
    idleUs: Number(sequence.maxSequenceIdleMicroseconds) || DEFAULT_IDLE_US,
    maxQueueDelayUs: Number(oldest?.maxQueueDelayMicroseconds ?? direct?.maxQueueDelayMicroseconds ?? 0n),
    minimumSlotUtilization: direct?.minimumSlotUtilization ?? 0,
    preferredBatchSizes: oldest?.preferredBatchSize ?? [],
    controls: readControls(sequence, config.name),
    states: sequence.state.map((state) => readState(state, config.name, options)),
  };
}
