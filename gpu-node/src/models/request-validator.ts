/**
 * Checks an inference request against the model config before it is queued, in the order and with the
 * messages of Triton's InferenceRequest::Normalize / ValidateRequestInputs (core/src/infer_request.cc).
 * Request-level messages carry Triton's `[request id: <id>] ` prefix; the two model-level lookups
 * (unknown input / output) do not, as in Triton. On success it yields what the backend executes: inputs
 * with their full shapes (batch dimension included, `reshape` applied) and the requested output names.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import { DataType, type ModelConfig, type ModelInput } from '../../../shared/src/gen/model_config_pb.js';
import { configTypeToDatatype, datatypeByteSize } from '../../../shared/src/tensors/datatype.js';
import { formatShape } from '../../../shared/src/tensors/shape.js';
import type { Datatype, InferRequest, Tensor } from '../../../shared/src/tensors/index.js';
import type { ExecutionRequest } from '../backends/backend.js';
import { markValidatedInputs } from '../backends/validated-inputs.js';
import { requestPrefix } from '../messages/request-prefix.js';

export interface ValidatedRequest {
  readonly execution: ExecutionRequest;
  /** Batch elements (1 when the model does not batch). */
  readonly batchSize: number;
}

const IMPLICIT_BATCH_NOTE =
  'NOTE: Setting a non-zero max_batch_size in the model config requires a batch dimension to be prepended ' +
  'to each input shape. If you want to specify the full shape including the batch dim in your input dims ' +
  'config, try setting max_batch_size to zero. See the model configuration docs for more info on max_batch_size.';

export function configDatatype(dataType: DataType): Datatype | null {
  return configTypeToDatatype(DataType[dataType] ?? '');
}

/** What a request is checked against, worked out once per config rather than on every request. */
interface ConfigLookup {
  readonly inputs: ReadonlyMap<string, InputLookup>;
  readonly outputNames: ReadonlySet<string>;
}

interface InputLookup {
  readonly config: ModelInput;
  readonly datatype: Datatype | null;
  readonly dims: readonly number[];
  readonly reshape: readonly number[] | undefined;
}

const lookups = new WeakMap<ModelConfig, ConfigLookup>();

function lookupOf(config: ModelConfig): ConfigLookup {
  let lookup = lookups.get(config);
  if (lookup === undefined) {
    const inputs = new Map<string, InputLookup>();
    for (const input of config.input) {
      inputs.set(input.name, {
        config: input,
        datatype: configDatatype(input.dataType),
        dims: input.dims.map(Number),
        reshape: input.reshape ? input.reshape.shape.map(Number) : undefined,
      });
    }
    lookup = { inputs, outputNames: new Set(config.output.map((output) => output.name)) };
    lookups.set(config, lookup);
  }
  return lookup;
}

/** The request's log prefix goes only into errors, so it is made only for them. */
function invalid(request: InferRequest, message: string): TesseraError {
  return TesseraError.invalidArg(requestPrefix(request.id) + message);
}

/** Past this many inputs a Set: nothing caps a request's input count, and a pairwise scan is quadratic. */
const PAIRWISE_SCAN_MAX = 16;

function hasDuplicateName(inputs: readonly Tensor[]): string | undefined {
  if (inputs.length > PAIRWISE_SCAN_MAX) {
    const seen = new Set<string>();
    for (const input of inputs) {
      if (seen.has(input.name)) return input.name;
      seen.add(input.name);
    }
    return undefined;
  }
  for (let i = 1; i < inputs.length; i++) {
    const name = (inputs[i] as Tensor).name;
    for (let j = 0; j < i; j++) if ((inputs[j] as Tensor).name === name) return name;
  }
  return undefined;
}

export function validateInferRequest(request: InferRequest, config: ModelConfig, modelName: string): ValidatedRequest {
  const lookup = lookupOf(config);

  // Requests carry a handful of inputs: a pairwise scan allocates nothing (a Set for long lists).
  const duplicate = hasDuplicateName(request.inputs);
  if (duplicate !== undefined) throw invalid(request, `input '${duplicate}' already exists in request`);

  const requestedOutputs = request.outputs === undefined ? [] : request.outputs.map((output) => output.name);
  for (const name of requestedOutputs) {
    if (!lookup.outputNames.has(name)) {
      throw TesseraError.invalidArg(`unexpected inference output '${name}' for model '${modelName}'`);
    }
  }

  checkInputCount(request, config, modelName, lookup);

  const maxBatchSize = config.maxBatchSize;
  const inputLookup = (name: string): InputLookup => {
    const found = lookup.inputs.get(name);
    if (!found) throw TesseraError.invalidArg(`unexpected inference input '${name}' for model '${modelName}'`);
    return found;
  };

  let batchSize = 0;
  if (maxBatchSize > 0) {
    for (const input of request.inputs) {
      if (inputLookup(input.name).config.isShapeTensor) continue;
      if (input.shape.length === 0) {
        throw invalid(request, `input '${input.name}' has no shape but model requires batch dimension for '${modelName}'`);
      }
      const first = input.shape[0] as number;
      if (batchSize === 0) batchSize = first;
      else if (first !== batchSize) {
        throw invalid(request, `input '${input.name}' batch size does not match other inputs for '${modelName}'`);
      }
    }
  }
  if (batchSize > maxBatchSize) {
    throw invalid(request, `inference request batch-size must be <= ${maxBatchSize} for '${modelName}'`);
  }

  const inputs: Tensor[] = [];
  for (const input of request.inputs) {
    const info = inputLookup(input.name);
    const expected = info.datatype;
    if (input.datatype !== expected) {
      throw invalid(
        request,
        `inference input '${input.name}' data-type is '${input.datatype}', but model '${modelName}' expects '${expected ?? 'INVALID'}'`,
      );
    }
    const batched = maxBatchSize > 0 && !info.config.isShapeTensor;
    const shape = input.shape;
    if (shape.some((dim) => dim < 0)) {
      throw invalid(
        request,
        `All input dimensions should be specified for input '${input.name}' for model '${modelName}', got ${formatShape(shape)}`,
      );
    }
    const configDims = info.dims;
    const skip = batched ? 1 : 0;
    let matches = configDims.length === shape.length - skip;
    for (let i = 0; matches && i < configDims.length; i++) {
      const d = configDims[i] as number;
      matches = d === -1 || d === shape[i + skip];
    }
    if (!matches) {
      const expectedDims = maxBatchSize > 0 ? [-1, ...configDims] : configDims;
      throw invalid(
        request,
        `unexpected shape for input '${input.name}' for model '${modelName}'. Expected ${formatShape(expectedDims)}, ` +
          `got ${formatShape(shape)}. ${maxBatchSize > 0 ? IMPLICIT_BATCH_NOTE : ''}`,
      );
    }
    if (info.reshape === undefined) {
      // The shape stands as given: the tensor is passed on as it is.
      inputs.push(input);
      continue;
    }
    const dims = batched ? shape.slice(1) : [...shape];
    const reshaped = applyReshape(dims, configDims, info.reshape);
    inputs.push({ ...input, shape: batched ? [shape[0] as number, ...reshaped] : reshaped });
  }

  for (const input of inputs) checkByteSize(input, modelName, request);
  markValidatedInputs(inputs);

  return {
    execution: { inputs, requestedOutputs, parameters: request.parameters },
    batchSize: Math.max(1, batchSize),
  };
}

function checkInputCount(request: InferRequest, config: ModelConfig, modelName: string, lookup: ConfigLookup): void {
  // Every input of the config given once (names are distinct by now): nothing can be missing.
  const given = request.inputs.length;
  if (given === config.input.length && request.inputs.every((input) => lookup.inputs.has(input.name))) return;
  const log = requestPrefix(request.id);
  const required = config.input.filter((input) => !input.optional);
  const names = new Set(request.inputs.map((input) => input.name));
  // The count alone is not enough once inputs are optional: an optional one must not stand in for a
  // required one. An unknown input is reported later, by its own message, as Triton orders them.
  const known = new Set(config.input.map((input) => input.name));
  const complete = required.every((input) => names.has(input.name)) || [...names].some((name) => !known.has(name));
  if (given <= config.input.length && given >= required.length && complete) return;
  const quoted = (list: readonly string[]) => `[${list.map((n) => `'${n}'`).join(',')}]`;
  const missing = quoted(required.filter((input) => !names.has(input.name)).map((input) => input.name));
  const got = quoted(request.inputs.map((input) => input.name));
  const expected =
    required.length === config.input.length
      ? `expected ${config.input.length} inputs but got ${given} inputs`
      : `expected number of inputs between ${required.length} and ${config.input.length} but got ${given} inputs`;
  throw TesseraError.invalidArg(
    `${log}${expected} for model '${modelName}'. Got input(s) ${got}, but missing required input(s) ${missing}. ` +
      'Please provide all required input(s).',
  );
}

/** Variable dimensions of `dims` fill the -1s of the reshape, in order (Triton's Normalize). */
function applyReshape(dims: readonly number[], configDims: readonly number[], reshape: readonly number[]): number[] {
  const variable = dims.filter((_, i) => configDims[i] === -1);
  return reshape.map((d) => (d === -1 ? (variable.shift() ?? -1) : d));
}

type ModelOutput = ModelConfig['output'][number];

const reshapedOutputs = new WeakMap<ModelConfig, ReadonlyMap<string, ModelOutput>>();

/** The outputs with a `reshape`, by name: looked up once per config, not built per request. */
function reshapedOutputsOf(config: ModelConfig): ReadonlyMap<string, ModelOutput> {
  let reshaped = reshapedOutputs.get(config);
  if (reshaped === undefined) {
    reshaped = new Map(config.output.flatMap((o) => (o.reshape ? [[o.name, o] as const] : [])));
    reshapedOutputs.set(config, reshaped);
  }
  return reshaped;
}

/**
 * The client's view of the backend's outputs: an output's `reshape` is the shape the backend produces
 * and `dims` the one clients see, so the shape goes back to `dims` (bytes unchanged, variable
 * dimensions carried over in order). Outputs without a reshape pass unchanged.
 */
export function clientOutputShapes(outputs: readonly Tensor[], config: ModelConfig): readonly Tensor[] {
  const reshaped = reshapedOutputsOf(config);
  if (reshaped.size === 0) return outputs;
  const batched = config.maxBatchSize > 0;
  return outputs.map((tensor) => {
    const cfg = reshaped.get(tensor.name);
    if (!cfg?.reshape) return tensor;
    const reshape = cfg.reshape.shape.map(Number);
    const produced = batched ? tensor.shape.slice(1) : [...tensor.shape];
    if (produced.length !== reshape.length) return tensor;
    const dims = applyReshape(produced, reshape, cfg.dims.map(Number));
    return { ...tensor, shape: batched ? [tensor.shape[0] as number, ...dims] : dims };
  });
}

function checkByteSize(input: Tensor, modelName: string, request: InferRequest): void {
  let count = 1;
  for (const dim of input.shape) count *= dim;
  const elementSize = datatypeByteSize(input.datatype);
  if (elementSize !== null) {
    const expected = count * elementSize;
    if (input.data.byteLength !== expected) {
      throw TesseraError.invalidArg(
        `${requestPrefix(request.id)}input byte size mismatch for input '${input.name}' for model '${modelName}'. Expected ${expected}, got ${input.data.byteLength}`,
      );
    }
    return;
  }
  // BYTES: every element is a 4-byte little-endian length followed by that many bytes.
  const data = input.data;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = 0;
  let elements = 0;
  while (offset < data.byteLength) {
    const left = data.byteLength - offset;
    if (left < 4) {
      throw TesseraError.invalidArg(
        `${requestPrefix(request.id)}incomplete string length indicator for inference input '${input.name}' for model '${modelName}', ` +
          `expecting 4 bytes but only ${left} bytes available. Please make sure the string length indicator is in one buffer.`,
      );
    }
    const length = view.getUint32(offset, true);
    offset += 4;
    if (data.byteLength - offset < length) {
      throw TesseraError.invalidArg(
        `${requestPrefix(request.id)}incomplete string data for inference input '${input.name}' for model '${modelName}', ` +
          `expecting string of length ${length} but only ${data.byteLength - offset} bytes available.`,
      );
    }
    offset += length;
    elements += 1;
  }
  if (elements !== count) {
    throw TesseraError.invalidArg(
      `${requestPrefix(request.id)}expected ${count} string elements for inference input '${input.name}' for model '${modelName}', got ${elements}`,
    );
  }
}
