/**
 * The one seam between this server and the KServe v2 HTTP infer codec in shared/src/kserve: the route
 * only ever sees these functions, so a change in the codec's shape is absorbed here.
 */
import {
  assembleBody,
  decodeInferRequestBody,
  encodeInferResponseParts,
  INFERENCE_HEADER_CONTENT_LENGTH,
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

/** Bytes of the JSON part of the body: validates the header like the codec does (400 when invalid). */
export function jsonPartLength(headerLength: string | null, bodyLength: number): number {
  return parseHeaderLength(headerLength, bodyLength) ?? bodyLength;
}

export function decodeInfer(args: DecodeArgs): DecodedInfer {
  // The args carry exactly the codec's options (absent ones as undefined, which it reads alike).
  return decodeInferRequestBody(args);
}

/** An answer as the buffers to write in order, and their total length. */
export interface EncodedInferChunks {
  /**
   * The JSON header's bytes, then each binary output's own bytes: views of the batch's output, not
   * copies (a wave of 64 answers used to copy each 4 KB row into a body of its own). Nothing writes an
   * output after the run, so they stay as they are until written.
   */
  readonly chunks: readonly Uint8Array[];
  readonly byteLength: number;
  /** This answer's own headers (never Content-Length): the caller may complete them in place. */
  readonly headers: Record<string, string>;
}

/** Encodes the response the way `decoded` asked, as the codec's one body would read, without joining it. */
export function encodeInfer(response: InferResponse, decoded: DecodedInfer): EncodedInferChunks {
  const { jsonText, sections } = encodeInferResponseParts(response, decoded);
  if (sections.length === 0) {
    const { body, headers } = assembleBody(jsonText, sections);
    return { chunks: [body], byteLength: body.byteLength, headers };
  }
  // A few hundred bytes: Buffer.from takes them from Node's shared slab, not a buffer of their own.
  const head = Buffer.from(jsonText, 'utf8');
  const chunks: Uint8Array[] = [head];
  let byteLength = head.byteLength;
  for (const section of sections) {
    if (section.byteLength === 0) continue;
    chunks.push(section);
    byteLength += section.byteLength;
  }
  return { chunks, byteLength, headers: { 'Content-Type': 'application/octet-stream', [INFERENCE_HEADER_CONTENT_LENGTH]: String(head.byteLength) } };
}

/** The chunks as one body (a compressed answer, a Web Response): one copy. */
export function joinChunks(answer: { readonly chunks: readonly Uint8Array[]; readonly byteLength: number }): Uint8Array {
  const only = answer.chunks[0];
  if (answer.chunks.length === 1 && only !== undefined) return only;
  const body = new Uint8Array(answer.byteLength);
  let offset = 0;
  for (const chunk of answer.chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
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
