/**
 * The requests a run sends, built from the model's metadata (`GET /v2/models/{m}` or gRPC
 * ModelMetadata): one tensor per input, of the input's shape with every -1 made 1 (or the full shape
 * given by --shape), filled with zeros, seeded random values, or the contents of a perf_analyzer-style
 * data file. Everything here is pure; fetching the metadata is perf-target.ts's job.
 *
 * Random values stay small (floats in [-1, 1), integers in [0, 100)) so a model doing arithmetic does
 * not overflow or produce NaN and fail for reasons that have nothing to do with load. BYTES elements
 * are 16 random letters (random) or empty (zero).
 *
 * Data file (perf_analyzer's `--input-data FILE` format): `{"data": [{"INPUT0": [..], "INPUT1":
 * {"content": [..], "shape": [..]}, "INPUT2": {"b64": ".."}}, ...]}`. Each entry is one request; the run
 * cycles through them. Arrays may be flat or nested; a "shape" there is the full shape, like --shape.
 */
import {
  elementCount,
  formatShape,
  jsonDataToTensorBytes,
  numbersToBf16Bytes,
  numbersToFp16Bytes,
  parseDatatype,
  expectedByteSize,
  type Datatype,
  type InferRequest,
  type Tensor,
} from '../../../shared/src/tensors/index.js';
import { mulberry32 } from '../lib/load/arrival-gaps.js';
import type { InputData } from './perf-options.js';

export interface TensorSpec {
  readonly name: string;
  readonly datatype: Datatype;
  /** As the metadata gives it: -1 for a variable dimension. */
  readonly shape: readonly number[];
}

export interface ModelSpec {
  readonly name: string;
  readonly inputs: readonly TensorSpec[];
  readonly outputs: readonly TensorSpec[];
}

function tensorSpecs(value: unknown, what: string): TensorSpec[] {
  if (!Array.isArray(value)) throw new Error(`model metadata: '${what}' is not a list`);
  return value.map((entry: unknown, i) => {
    const t = (entry ?? {}) as { name?: unknown; datatype?: unknown; shape?: unknown };
    if (typeof t.name !== 'string') throw new Error(`model metadata: ${what}[${i}] has no name`);
    if (!Array.isArray(t.shape) || t.shape.some((d) => !Number.isSafeInteger(Number(d)) || Number(d) < -1)) {
      throw new Error(`model metadata: ${what} '${t.name}' has a bad shape`);
    }
    return { name: t.name, datatype: parseDatatype(t.datatype, `${what} '${t.name}'`), shape: t.shape.map(Number) };
  });
}

/** The KServe v2 metadata JSON (the gRPC answer is converted to the same shape). */
export function parseModelMetadata(json: unknown): ModelSpec {
  const m = (json ?? {}) as { name?: unknown; inputs?: unknown; outputs?: unknown };
  if (typeof m.name !== 'string') throw new Error('model metadata: no name');
  return { name: m.name, inputs: tensorSpecs(m.inputs, 'inputs'), outputs: tensorSpecs(m.outputs ?? [], 'outputs') };
}

/** The shape to send: --shape when given (it must fit the metadata), else every -1 made 1. */
export function resolveShape(spec: TensorSpec, override: readonly number[] | undefined): number[] {
  if (override === undefined) return spec.shape.map((d) => (d === -1 ? 1 : d));
  const fits = override.length === spec.shape.length && spec.shape.every((d, i) => d === -1 || d === override[i]);
  if (!fits) throw new Error(`--shape ${spec.name}:${override.join(',')} does not fit the model's shape ${formatShape(spec.shape)}`);
  return [...override];
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** Values (as JSON `data` would carry them) → raw tensor bytes, for every datatype. */
function valuesToBytes(datatype: Datatype, values: readonly unknown[], name: string): Uint8Array {
  if (datatype === 'FP16') return numbersToFp16Bytes(values as number[]);
  if (datatype === 'BF16') return numbersToBf16Bytes(values as number[]);
  return jsonDataToTensorBytes(datatype, [values.length], values, { name });
}

function generatedTensor(spec: TensorSpec, shape: number[], kind: 'zero' | 'random', random: () => number): Tensor {
  const count = elementCount(shape, `input '${spec.name}'`);
  const { datatype } = spec;
  let data: Uint8Array;
  if (kind === 'zero') {
    const size = expectedByteSize(datatype, shape);
    data = size !== null ? new Uint8Array(size) : valuesToBytes(datatype, new Array<string>(count).fill(''), spec.name);
  } else {
    const value = (): unknown => {
      if (datatype === 'BOOL') return random() < 0.5;
      if (datatype === 'BYTES') return Array.from({ length: 16 }, () => LETTERS[Math.floor(random() * 26)]).join('');
      if (datatype.startsWith('FP') || datatype === 'BF16') return random() * 2 - 1;
      return Math.floor(random() * 100);
    };
    data = valuesToBytes(datatype, Array.from({ length: count }, value), spec.name);
  }
  return { name: spec.name, datatype, shape, data };
}

function flatten(value: unknown): unknown[] {
  return Array.isArray(value) ? value.flatMap(flatten) : [value];
}

function fileTensor(spec: TensorSpec, shape: number[], entry: unknown, where: string): Tensor {
  let content: unknown = entry;
  let dims = shape;
  if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) {
    const e = entry as { content?: unknown; shape?: unknown; b64?: unknown };
    if (Array.isArray(e.shape)) dims = resolveShape(spec, e.shape.map(Number));
    if (typeof e.b64 === 'string') {
      const data = new Uint8Array(Buffer.from(e.b64, 'base64'));
      const size = expectedByteSize(spec.datatype, dims);
      if (size !== null && size !== data.length) throw new Error(`${where}: b64 has ${data.length} bytes, shape ${formatShape(dims)} needs ${size}`);
      return { name: spec.name, datatype: spec.datatype, shape: dims, data };
    }
    content = e.content;
  }
  if (!Array.isArray(content)) throw new Error(`${where}: expected an array, {"content": [...]} or {"b64": "..."}`);
  const values = flatten(content);
  const count = elementCount(dims, where);
  if (values.length !== count) throw new Error(`${where}: ${values.length} values, shape ${formatShape(dims)} needs ${count}`);
  return { name: spec.name, datatype: spec.datatype, shape: dims, data: valuesToBytes(spec.datatype, values, spec.name) };
}

export interface RequestBuildOptions {
  readonly model: ModelSpec;
  readonly modelVersion?: string;
  readonly shapes: Readonly<Record<string, readonly number[]>>;
  readonly inputData: InputData;
  /** The parsed data file, when inputData is a file. */
  readonly fileJson?: unknown;
  readonly seed: number;
}

/** The requests to cycle through: one for zero/random data, one per file entry otherwise. */
export function buildRequests(options: RequestBuildOptions): InferRequest[] {
  const { model } = options;
  for (const name of Object.keys(options.shapes)) {
    if (!model.inputs.some((i) => i.name === name)) throw new Error(`--shape names '${name}', which is not an input of '${model.name}'`);
  }
  const shapes = model.inputs.map((spec) => resolveShape(spec, options.shapes[spec.name]));
  const request = (inputs: Tensor[]): InferRequest => ({
    id: '',
    modelName: model.name,
    ...(options.modelVersion !== undefined ? { modelVersion: options.modelVersion } : {}),
    inputs,
    parameters: {},
  });
  if (options.inputData.kind !== 'file') {
    const kind = options.inputData.kind;
    const random = mulberry32(options.seed);
    return [request(model.inputs.map((spec, i) => generatedTensor(spec, shapes[i] as number[], kind, random)))];
  }
  const entries = (options.fileJson as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(entries) || entries.length === 0) throw new Error(`${options.inputData.path}: expected {"data": [ {...}, ... ]} with at least one entry`);
  return entries.map((entry: unknown, n) => {
    if (typeof entry !== 'object' || entry === null) throw new Error(`${options.inputData.kind === 'file' ? options.inputData.path : ''}: data[${n}] is not an object`);
    return request(
      model.inputs.map((spec, i) => {
        const where = `data[${n}].${spec.name}`;
        const value = (entry as Record<string, unknown>)[spec.name];
        if (value === undefined) throw new Error(`${where} is missing`);
        return fileTensor(spec, shapes[i] as number[], value, where);
      }),
    );
  });
}
