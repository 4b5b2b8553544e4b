/**
 * Server side: an HTTP `/infer` body (JSON, JSON + binary sections, or a raw binary body) → an
 * InferRequest plus the caller's choices of binary outputs. Every problem with the body is a
 * TesseraError (INVALID_ARG, or UNSUPPORTED for shared memory) whose message names it.
 *
 * Binary input data is not copied: those tensors' `data` are views into `body`.
 */
import { TesseraError } from '../errors/index.js';
import {
  DEFAULT_MAX_JSON_INPUT_BYTES,
  elementCount,
  jsonDataToTensorBytes,
  parseDatatype,
  validateTensorData,
  type InferRequest,
  type RequestedOutput,
  type Tensor,
} from '../tensors/index.js';
import { parseHeaderLength, INFERENCE_HEADER_CONTENT_LENGTH } from './header-length.js';
import { HeaderMemo, type HeaderTemplate } from './header-memo.js';
import { describeJson, isJsonObject, jsonTextOf, own, parseJsonBytes, parseJsonText, type JsonObject } from './json-text.js';
import { parseInputDataSource, parseOutputParameters, parseRequestParameters } from './parameters.js';
import { decodeRawInput, type RawInputModel } from './raw-input.js';

export interface DecodeInferRequestOptions {
  readonly body: Uint8Array;
  /** The `Inference-Header-Content-Length` header value; absent/null when the request had none. */
  readonly headerLength?: string | null;
  /** From the URL; any `model_name` in the body is ignored. */
  readonly modelName: string;
  /** From the URL; undefined or '' means the latest ready version. */
  readonly modelVersion?: string;
  /** Largest byte size of one input sent as JSON `data` (--http-max-input-size). Default 64 MiB. */
  readonly maxJsonInputBytes?: number;
  /**
   * The model's inputs, needed only for a raw binary body (`Inference-Header-Content-Length: 0`).
   * Without it such a body is UNSUPPORTED.
   */
  readonly rawInputModel?: RawInputModel;
}

export interface DecodedInferRequest {
  readonly request: InferRequest;
  /** Request-level `binary_data_output` (false when absent; true for raw binary requests). */
  readonly binaryOutputDefault: boolean;
  /** Per-output `binary_data` the client set explicitly; it overrides binaryOutputDefault. */
  readonly outputBinary: ReadonlyMap<string, boolean>;
}

function requireString(obj: JsonObject, key: string, what: string): string {
  const value = own(obj, key);
  if (typeof value !== 'string') {
    throw TesseraError.invalidArg(
      value === undefined
        ? `${what} is missing '${key}'`
        : `'${key}' of ${what} must be a string, got ${describeJson(value)}`,
    );
  }
  return value;
}

function parseShape(value: unknown, what: string): number[] {
  if (!Array.isArray(value)) {
    throw TesseraError.invalidArg(
      value === undefined ? `${what} is missing 'shape'` : `'shape' of ${what} must be an array, got ${describeJson(value)}`,
    );
  }
  for (const dim of value) {
    if (typeof dim !== 'number' || !Number.isInteger(dim)) {
      throw TesseraError.invalidArg(`'shape' of ${what} must hold integers, got ${describeJson(value)}`);
    }
  }
  return value as number[];
}

function decodeRaw(options: DecodeInferRequestOptions): DecodedInferRequest {
  if (options.rawInputModel === undefined) {
    throw TesseraError.unsupported(
      `raw binary requests (${INFERENCE_HEADER_CONTENT_LENGTH}: 0) are not supported for model '${options.modelName}'`,
    );
  }
  const input = decodeRawInput(options.body, options.rawInputModel, options.modelName);
  return {
    request: { id: '', modelName: options.modelName, modelVersion: options.modelVersion, inputs: [input], parameters: {} },
    binaryOutputDefault: true,
    outputBinary: new Map(),
  };
}

/** The binary-extension headers this process decoded lately (header-memo.ts says why). */
export const requestHeaderMemo = new HeaderMemo();

export function decodeInferRequestBody(options: DecodeInferRequestOptions): DecodedInferRequest {
  const { body } = options;
  const headerLength = parseHeaderLength(options.headerLength, body.length);
  if (headerLength === 0) return decodeRaw(options);
  if (headerLength === null) return decodeParsed(parseJsonBytes(body, 'request'), options, null).decoded;
  // The binary extension: the same header comes with every request of a client, so its decode is remembered.
  const text = jsonTextOf(body.subarray(0, headerLength), 'request');
  const remembered = requestHeaderMemo.get(text);
  if (remembered !== undefined) return withBinaryInputs(remembered, body.subarray(headerLength), options.modelName, options.modelVersion);
  const { decoded, allBinary } = decodeParsed(parseJsonText(text, 'request'), options, headerLength);
  if (allBinary) requestHeaderMemo.remember(text, templateOf(decoded));
  return decoded;
}

/** A remembered header's request over this body's binary part: the checks that depend on those bytes, in the order decodeParsed makes them. */
function withBinaryInputs(template: HeaderTemplate, binary: Uint8Array, modelName: string, modelVersion: string | undefined): DecodedInferRequest {
  let cursor = 0;
  const inputs: Tensor[] = [];
  for (const input of template.inputs) {
    const remaining = binary.length - cursor;
    if (input.byteSize > remaining) throw sizeMismatch(input.name, input.byteSize, remaining, modelName);
    const tensor: Tensor = { name: input.name, datatype: input.datatype as Tensor['datatype'], shape: ownShape(input.shape), data: binary.subarray(cursor, cursor + input.byteSize) };
    cursor += input.byteSize;
    validateTensorData(tensor, `input '${input.name}' for model '${modelName}'`);
    inputs.push(tensor);
  }
  if (cursor !== binary.length) throw TesseraError.invalidArg(`unexpected additional input data for model '${modelName}'`);
  const { id, parameters, outputs } = template;
  const request: InferRequest =
    outputs === undefined ? { id, modelName, modelVersion, inputs, parameters } : { id, modelName, modelVersion, inputs, parameters, outputs };
  return { request, binaryOutputDefault: template.binaryOutputDefault, outputBinary: template.outputBinary };
}

/**
 * A request's own plain copy of a remembered shape: each request may keep or change its shape without
 * reaching the memo, and V8's array builtins (slice, join: the batcher's keys) run 3-4x slower on the
 * memo's frozen arrays. A loop, since slice itself takes the frozen array's slow path.
 */
function ownShape(shape: readonly number[]): number[] {
  const copy = new Array<number>(shape.length);
  for (let i = 0; i < shape.length; i++) copy[i] = shape[i]!;
  return copy;
}

/** What a decode whose inputs are all binary took from its header. */
function templateOf(decoded: DecodedInferRequest): HeaderTemplate {
  const { request } = decoded;
  return {
    id: request.id,
    parameters: request.parameters,
    // The shape copied: the first request keeps its own array, and the memo's is frozen.
    inputs: request.inputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: ownShape(t.shape), byteSize: t.data.byteLength })),
    outputs: request.outputs,
    binaryOutputDefault: decoded.binaryOutputDefault,
    outputBinary: decoded.outputBinary,
  };
}

function sizeMismatch(name: string, expected: number, remaining: number, modelName: string): TesseraError {
  return TesseraError.invalidArg(
    `unexpected size for input '${name}', expecting ${expected} bytes but only ${remaining} ` +
      `remain in the request body for model '${modelName}'`,
  );
}

/** The request from its parsed JSON; `allBinary` when every input's data came from the binary part. */
function decodeParsed(
  json: unknown,
  options: DecodeInferRequestOptions,
  headerLength: number | null,
): { decoded: DecodedInferRequest; allBinary: boolean } {
  const { body, modelName } = options;
  const maxJsonInputBytes = options.maxJsonInputBytes ?? DEFAULT_MAX_JSON_INPUT_BYTES;
  const jsonLength = headerLength ?? body.length;
  if (!isJsonObject(json)) {
    throw TesseraError.invalidArg(`the request JSON must be an object, got ${describeJson(json)}`);
  }
  const id = own(json, 'id') ?? '';
  if (typeof id !== 'string') throw TesseraError.invalidArg(`request 'id' must be a string, got ${describeJson(id)}`);
  const { parameters, binaryDataOutput } = parseRequestParameters(own(json, 'parameters'));

  const rawInputs = own(json, 'inputs');
  if (!Array.isArray(rawInputs)) {
    throw TesseraError.invalidArg(
      rawInputs === undefined
        ? "the request JSON is missing 'inputs'"
        : `'inputs' must be an array, got ${describeJson(rawInputs)}`,
    );
  }
  const binary = body.subarray(jsonLength);
  let cursor = 0;
  let allBinary = true;
  // Names already taken: a scan of the inputs so far for the usual few, a Set past that (a stranger may send thousands).
  const seen = rawInputs.length > SCAN_NAMES_UP_TO ? new Set<string>() : undefined;
  const inputs: Tensor[] = [];
  for (let index = 0; index < rawInputs.length; index++) {
    const entry: unknown = rawInputs[index];
    if (!isJsonObject(entry)) {
      throw TesseraError.invalidArg(`input #${index} must be a JSON object, got ${describeJson(entry)}`);
    }
    const name = requireString(entry, 'name', `input #${index}`);
    const what = `input '${name}' for model '${modelName}'`;
    if (seen === undefined ? named(inputs, name) : seen.has(name)) {
      throw TesseraError.invalidArg(`input '${name}' appears more than once in the request`);
    }
    seen?.add(name);
    const datatype = parseDatatype(own(entry, 'datatype'), `input '${name}'`);
    const shape = parseShape(own(entry, 'shape'), `input '${name}'`);
    elementCount(shape, what);
    const source = parseInputDataSource(entry, name);
    let data: Uint8Array;
    if (source.kind === 'binary') {
      if (headerLength === null) {
        throw TesseraError.invalidArg(
          `input '${name}' has 'binary_data_size', so the request must carry a valid ` +
            `'${INFERENCE_HEADER_CONTENT_LENGTH}' header giving the size of the JSON part`,
        );
      }
      const remaining = binary.length - cursor;
      if (source.byteSize > remaining) throw sizeMismatch(name, source.byteSize, remaining, modelName);
      data = binary.subarray(cursor, cursor + source.byteSize);
      cursor += source.byteSize;
    } else {
      allBinary = false;
      data = jsonDataToTensorBytes(datatype, shape, own(entry, 'data'), { name, maxBytes: maxJsonInputBytes });
    }
    const tensor: Tensor = { name, datatype, shape, data };
    validateTensorData(tensor, what);
    inputs.push(tensor);
  }
  if (cursor !== binary.length) {
    throw TesseraError.invalidArg(`unexpected additional input data for model '${modelName}'`);
  }

  const { outputs, outputBinary } = parseOutputs(own(json, 'outputs'));
  const request: InferRequest =
    outputs === undefined
      ? { id, modelName, modelVersion: options.modelVersion, inputs, parameters }
      : { id, modelName, modelVersion: options.modelVersion, inputs, parameters, outputs };
  return { decoded: { request, binaryOutputDefault: binaryDataOutput ?? false, outputBinary }, allBinary };
}

function named(tensors: readonly Tensor[], name: string): boolean {
  for (const tensor of tensors) if (tensor.name === name) return true;
  return false;
}

/** Input names are checked for repeats by a scan up to this many inputs, by a Set beyond. */
const SCAN_NAMES_UP_TO = 16;
/** The choices of a request that names no outputs: none, shared (never written to). */
const NO_OUTPUT_CHOICES: ReadonlyMap<string, boolean> = new Map();

function parseOutputs(value: unknown): {
  outputs: RequestedOutput[] | undefined;
  outputBinary: ReadonlyMap<string, boolean>;
} {
  if (value === undefined) return { outputs: undefined, outputBinary: NO_OUTPUT_CHOICES };
  const outputBinary = new Map<string, boolean>();
  if (!Array.isArray(value)) {
    throw TesseraError.invalidArg(`'outputs' must be an array, got ${describeJson(value)}`);
  }
  const outputs: RequestedOutput[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of value.entries()) {
    if (!isJsonObject(entry)) {
      throw TesseraError.invalidArg(`output #${index} must be a JSON object, got ${describeJson(entry)}`);
    }
    const name = requireString(entry, 'name', `output #${index}`);
    if (seen.has(name)) throw TesseraError.invalidArg(`output '${name}' is requested more than once`);
    seen.add(name);
    const { binaryData, classification } = parseOutputParameters(own(entry, 'parameters'), name);
    if (binaryData !== undefined) outputBinary.set(name, binaryData);
    outputs.push({
      name,
      ...(binaryData === undefined ? {} : { binaryData }),
      ...(classification === undefined ? {} : { classification }),
    });
  }
  return { outputs, outputBinary };
}
