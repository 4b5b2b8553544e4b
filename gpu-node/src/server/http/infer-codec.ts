/**
 * The one seam between this server and the KServe v2 HTTP infer codec in shared/src/kserve: the route
 * only ever sees these functions, so a change in the codec's shape is absorbed here.
 */
import {
  decodeInferRequestBody,
  encodeInferResponse,
  parseHeaderLength,
  type RawInputModel,
} from '../../../../shared/src/kserve/index.js';
import type { InferRequest, InferResponse } from '../../../../shared/src/tensors/index.js';
import type { NodeCore } from '../../server-api/index.js';

export interface DecodeArgs {
  readonly body: Uint8Array;
  /** The raw Inference-Header-Content-Length header; null when absent (the whole body is JSON). */
  readonly headerLength: string | null;
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly maxJsonInputBytes: number;
  /** With `Inference-Header-Content-Length: 0`: the model's inputs, whose single one is the whole body. */
  readonly rawInputModel?: RawInputModel;
}

export interface DecodedInfer {
  readonly request: InferRequest;
  /** Encodes the response the way the request asked (binary or JSON per output). */
  readonly encode: (response: InferResponse) => EncodedInfer;
}

export interface EncodedInfer {
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
}

/** Bytes of the JSON part of the body: validates the header like the codec does (400 when invalid). */
export function jsonPartLength(headerLength: string | null, bodyLength: number): number {
  return parseHeaderLength(headerLength, bodyLength) ?? bodyLength;
}

export function decodeInfer(args: DecodeArgs): DecodedInfer {
  const decoded = decodeInferRequestBody({
    body: args.body,
    headerLength: args.headerLength,
    modelName: args.modelName,
    ...(args.modelVersion === undefined ? {} : { modelVersion: args.modelVersion }),
    maxJsonInputBytes: args.maxJsonInputBytes,
    ...(args.rawInputModel === undefined ? {} : { rawInputModel: args.rawInputModel }),
  });
  const flags = { binaryOutputDefault: decoded.binaryOutputDefault, outputBinary: decoded.outputBinary };
  return { request: decoded.request, encode: (response) => encodeInferResponse(response, flags) };
}

/**
 * What the codec needs to deduce a raw body's tensor: the metadata gives names, datatypes and shapes
 * (batch dimension included), the config says whether that first dimension is the batch one.
 */
export function rawInputModelOf(core: NodeCore, modelName: string, modelVersion: string | undefined): RawInputModel {
  const metadata = core.modelMetadata(modelName, modelVersion);
  const maxBatchSize = core.modelConfig(modelName, modelVersion).maxBatchSize;
  return {
    maxBatchSize,
    inputs: metadata.inputs.map((input) => ({
      name: input.name,
      datatype: input.datatype,
      dims: maxBatchSize > 0 ? input.shape.slice(1) : [...input.shape],
    })),
  };
}
