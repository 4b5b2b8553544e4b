/**
 * Client side (gateway, tests): HTTP `/infer` response → InferResponse, the inverse of
 * encodeInferResponse, and the error body of a failed call → TesseraError. A response that breaks the
 * protocol is the server's fault, so it is reported as INTERNAL ("malformed inference response").
 */
import { errorCodeFromHttp, TesseraError } from '../errors/index.js';
import {
  jsonDataToTensorBytes,
  parseDatatype,
  validateTensorData,
  type InferResponse,
  type ParameterValue,
  type Tensor,
} from '../tensors/index.js';
import { parseHeaderLength } from './header-length.js';
import { describeJson, isJsonObject, own, parseJsonBytes, type JsonObject } from './json-text.js';

function malformed(message: string): TesseraError {
  return TesseraError.internal(`malformed inference response: ${message}`);
}

function parseOutput(entry: unknown, index: number, binary: Uint8Array, cursor: { at: number }): Tensor {
  if (!isJsonObject(entry)) throw malformed(`output #${index} is not an object`);
  const name = own(entry, 'name');
  if (typeof name !== 'string') throw malformed(`output #${index} has no name`);
  const datatype = parseDatatype(own(entry, 'datatype'), `output '${name}'`);
  const shape = own(entry, 'shape');
  if (!Array.isArray(shape) || !shape.every((d) => typeof d === 'number' && Number.isInteger(d))) {
    throw malformed(`output '${name}' has an invalid shape ${describeJson(shape)}`);
  }
  const params = own(entry, 'parameters');
  const size = isJsonObject(params) ? own(params, 'binary_data_size') : undefined;
  let data: Uint8Array;
  if (size !== undefined) {
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0 || size > binary.length - cursor.at) {
      throw malformed(`output '${name}' has binary_data_size ${describeJson(size)} beyond the body`);
    }
    data = binary.subarray(cursor.at, cursor.at + size);
    cursor.at += size;
  } else {
    // JSON has no literal for NaN/Infinity; the server writes null for them.
    const raw = own(entry, 'data');
    const values = Array.isArray(raw) && (datatype === 'FP32' || datatype === 'FP64') ? raw.map((v) => v ?? NaN) : raw;
    data = jsonDataToTensorBytes(datatype, shape as number[], values, {
      name,
      role: 'output',
      maxBytes: Infinity,
      allowNonFinite: true,
    });
  }
  const tensor: Tensor = { name, datatype, shape: shape as number[], data };
  validateTensorData(tensor, `output '${name}'`);
  return tensor;
}

function parseParameters(value: unknown): Record<string, ParameterValue> | undefined {
  if (value === undefined) return undefined;
  if (!isJsonObject(value)) throw malformed("'parameters' is not an object");
  const entries = Object.entries(value).map(([k, v]): [string, ParameterValue] => {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
      throw malformed(`parameter '${k}' has unsupported value ${describeJson(v)}`);
    }
    return [k, v];
  });
  return Object.fromEntries(entries);
}

/**
 * Decodes a successful response body. `headerLength` is the `Inference-Header-Content-Length` response
 * header (absent for all-JSON responses). Binary output data are views into `body`.
 */
export function decodeInferResponseBody(body: Uint8Array, headerLength?: string | null): InferResponse {
  try {
    const jsonLength = parseHeaderLength(headerLength, body.length) ?? body.length;
    const json = parseJsonBytes(body.subarray(0, jsonLength), 'response');
    if (!isJsonObject(json)) throw malformed('the body is not a JSON object');
    const obj: JsonObject = json;
    const modelName = own(obj, 'model_name');
    const modelVersion = own(obj, 'model_version');
    const id = own(obj, 'id') ?? '';
    if (typeof modelName !== 'string') throw malformed("'model_name' is missing");
    if (typeof modelVersion !== 'string' && typeof modelVersion !== 'number') {
      throw malformed("'model_version' is missing");
    }
    if (typeof id !== 'string') throw malformed("'id' is not a string");
    const rawOutputs = own(obj, 'outputs') ?? [];
    if (!Array.isArray(rawOutputs)) throw malformed("'outputs' is not an array");
    const binary = body.subarray(jsonLength);
    const cursor = { at: 0 };
    const outputs = rawOutputs.map((o, i) => parseOutput(o, i, binary, cursor));
    if (cursor.at !== binary.length) throw malformed('unexpected bytes after the last binary output');
    const parameters = parseParameters(own(obj, 'parameters'));
    return {
      id,
      modelName,
      modelVersion: String(modelVersion),
      outputs,
      ...(parameters === undefined ? {} : { parameters }),
    };
  } catch (err) {
    if (err instanceof TesseraError && err.code !== 'INTERNAL') throw malformed(err.message);
    throw err;
  }
}

/** The TesseraError a non-2xx `/infer` (or any KServe) answer stands for: code from the status, message from `{"error"}`. */
export function httpErrorFromResponse(status: number, body: Uint8Array): TesseraError {
  let message = `HTTP status ${status}`;
  try {
    const json = parseJsonBytes(body, 'error');
    const error = isJsonObject(json) ? own(json, 'error') : undefined;
    if (typeof error === 'string') message = error;
  } catch {
    // An empty or non-JSON error body (Triton sends empty bodies for not-ready) keeps the status text.
  }
  return new TesseraError(errorCodeFromHttp(status), message);
}
