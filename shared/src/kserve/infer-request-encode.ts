/**
 * Client side (gateway, tests): InferRequest → HTTP `/infer` body, the inverse of
 * decodeInferRequestBody. Inputs go binary by default because that works for every datatype and
 * avoids JSON's precision limits for 64-bit integers.
 */
import { tensorBytesToJsonData, validateTensorData, type InferRequest } from '../tensors/index.js';
import { assembleBody, type EncodedHttpBody } from './infer-response-encode.js';
import { writeJson } from './json-text.js';

export interface RequestEncodingOptions {
  /** Which inputs travel as binary sections: all (true, default), none (false), or the named ones. */
  readonly binaryInputs?: boolean | readonly string[];
  /** Request-level `binary_data_output`; omitted from the body when undefined. */
  readonly binaryDataOutput?: boolean;
}

/** INVALID_ARG for inconsistent input tensors and for FP16/BF16 inputs chosen to go as JSON. */
export function encodeInferRequestBody(request: InferRequest, options: RequestEncodingOptions = {}): EncodedHttpBody {
  const { json, sections } = inferRequestParts(request, options);
  return assembleBody(json, sections);
}

/** The request's JSON header and its binary sections (the inputs' own bytes, not copied), for a caller that writes them apart. */
export function inferRequestParts(request: InferRequest, options: RequestEncodingOptions = {}): { json: string; sections: Uint8Array[] } {
  const choice = options.binaryInputs ?? true;
  const isBinary = (name: string): boolean => (typeof choice === 'boolean' ? choice : choice.includes(name));
  const sections: Uint8Array[] = [];
  const inputs = request.inputs.map((tensor) => {
    validateTensorData(tensor, `input '${tensor.name}'`);
    const base = { name: tensor.name, shape: tensor.shape, datatype: tensor.datatype };
    if (isBinary(tensor.name)) {
      sections.push(tensor.data);
      return { ...base, parameters: { binary_data_size: tensor.data.length } };
    }
    return { ...base, data: tensorBytesToJsonData(tensor, 'input') };
  });
  const parameters = {
    ...request.parameters,
    ...(options.binaryDataOutput === undefined ? {} : { binary_data_output: options.binaryDataOutput }),
  };
  const outputs = request.outputs?.map((o) => {
    const params = {
      ...(o.binaryData === undefined ? {} : { binary_data: o.binaryData }),
      ...(o.classification === undefined ? {} : { classification: o.classification }),
    };
    return Object.keys(params).length > 0 ? { name: o.name, parameters: params } : { name: o.name };
  });
  const json = {
    ...(request.id !== '' ? { id: request.id } : {}),
    ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
    inputs,
    ...(outputs === undefined ? {} : { outputs }),
  };
  return { json: writeJson(json), sections };
}
