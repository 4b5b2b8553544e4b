/**
 * The one seam between this server and the KServe v2 HTTP infer codec in shared/src/kserve: the route
 * only ever sees these functions, so a change in the codec's shape is absorbed here.
 */
import {
  decodeInferRequestBody,
  encodeInferResponse,
  parseHeaderLength,
  type DecodedInferRequest,
  type RawInputModel,
} from '../../../../shared/src/kserve/index.js';
import type { InferResponse } from '../../../../shared/src/tensors/index.js';
import type { NodeCore } from '../../server-api/index.js';

export interface DecodeArgs {
  readonly body: Uint8Array;
  /** The raw Inference-Header-Content-Length header; null when absent (the whole body is JSON). */
  readonly headerLength: string | null;
  readonly modelName: string;
  readonly modelVersion: string | undefined;
  readonly maxJsonInputBytes: number;
  /** With `Inference-Header-Content-Length: 0`: the model's inputs, whose single one is the whole body. */
  readonly rawInputModel: RawInputModel | undefined;
}

/** The request, and how the client wants its outputs (binary or JSON per output): pass it to encodeInfer. */
export type DecodedInfer = DecodedInferRequest;

export interface EncodedInfer {
  readonly body: Uint8Array;
  /** This answer's own headers (never Content-Length): the caller may complete them in place. */
  readonly headers: Record<string, string>;
}

/** Bytes of the JSON part of the body: validates the header like the codec does (400 when invalid). */
export function jsonPartLength(headerLength: string | null, bodyLength: number): number {
  return parseHeaderLength(headerLength, bodyLength) ?? bodyLength;
}

export function decodeInfer(args: DecodeArgs): DecodedInfer {
  // The args carry exactly the codec's options (absent ones as undefined, which it reads alike).
  return decodeInferRequestBody(args);
}

/** Encodes the response the way `decoded` asked. */
export function encodeInfer(response: InferResponse, decoded: DecodedInfer): EncodedInfer {
  return encodeInferResponse(response, decoded);
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
