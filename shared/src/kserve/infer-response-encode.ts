/**
 * Server side: InferResponse → HTTP `/infer` response body and headers. Outputs go as flat JSON
 * `data`, or — when the client asked for binary (per output, else the request-level default) — as
 * binary sections after the JSON header, in output order.
 */
import { TesseraError } from '../errors/index.js';
import { tensorBytesToJsonData, validateTensorData, type InferResponse } from '../tensors/index.js';
import { INFERENCE_HEADER_CONTENT_LENGTH } from './header-length.js';
import { writeJson } from './json-text.js';

export interface ResponseEncodingOptions {
  /** Request-level `binary_data_output` (true for raw binary requests). */
  readonly binaryOutputDefault: boolean;
  /** Per-output `binary_data` the client set explicitly; overrides the default. */
  readonly outputBinary?: ReadonlyMap<string, boolean>;
}

export interface EncodedHttpBody {
  readonly body: Uint8Array;
  /** Content-Type, plus Inference-Header-Content-Length when binary sections follow the JSON. */
  readonly headers: Record<string, string>;
}

const utf8 = new TextEncoder();

/** Joins a JSON header and binary sections into one body with the matching headers. */
export function assembleBody(jsonText: string, sections: readonly Uint8Array[]): EncodedHttpBody {
  const header = utf8.encode(jsonText);
  if (sections.length === 0) {
    return { body: header, headers: { 'Content-Type': 'application/json' } };
  }
  const total = sections.reduce((n, s) => n + s.length, header.length);
  const body = new Uint8Array(total);
  body.set(header, 0);
  let offset = header.length;
  for (const s of sections) {
    body.set(s, offset);
    offset += s.length;
  }
  return {
    body,
    headers: {
      'Content-Type': 'application/octet-stream',
      [INFERENCE_HEADER_CONTENT_LENGTH]: String(header.length),
    },
  };
}

/**
 * Throws INVALID_ARG when an output the client wants as JSON is FP16/BF16, and INTERNAL when an output
 * tensor's data does not match its own shape (a backend bug, not the client's).
 */
export function encodeInferResponse(response: InferResponse, options: ResponseEncodingOptions): EncodedHttpBody {
  const sections: Uint8Array[] = [];
  const outputs = response.outputs.map((tensor) => {
    try {
      validateTensorData(tensor, `output '${tensor.name}' of model '${response.modelName}'`);
    } catch (err) {
      throw TesseraError.internal(`inconsistent inference output: ${(err as Error).message}`, err);
    }
    const binary = options.outputBinary?.get(tensor.name) ?? options.binaryOutputDefault;
    const base = { name: tensor.name, datatype: tensor.datatype, shape: tensor.shape };
    if (binary) {
      sections.push(tensor.data);
      return { ...base, parameters: { binary_data_size: tensor.data.length } };
    }
    return { ...base, data: tensorBytesToJsonData(tensor) };
  });
  const parameters = response.parameters;
  const json = {
    ...(response.id !== '' ? { id: response.id } : {}),
    model_name: response.modelName,
    model_version: String(response.modelVersion),
    ...(parameters !== undefined && Object.keys(parameters).length > 0 ? { parameters } : {}),
    outputs,
  };
  return assembleBody(writeJson(json), sections);
}
