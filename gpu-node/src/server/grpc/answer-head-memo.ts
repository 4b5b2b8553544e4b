/**
 * ModelInfer answers of one shape, encoded once. Under a steady load every answer of a model has the same
 * bytes before each output's data: the gRPC prefix, model name and version, each output's name, datatype,
 * shape and the length of its raw contents. When an answer has no id and no parameters and all of its
 * outputs are large enough to go out as views (OUTPUT_VIEW_BYTES), those head pieces are remembered and
 * the next answer of the same layout is the remembered pieces around its outputs' data: no buffer, writer
 * or UTF-8 encoding per answer. Any other answer is encoded afresh (encodeInferResponseFramed).
 */
import { encodeInferResponseFramed, type EncodedInferResponse } from '../../../../shared/src/grpc/index.js';
import type { InferResponse, Tensor } from '../../../../shared/src/tensors/index.js';

interface OutputLayout {
  readonly name: string;
  readonly datatype: string;
  readonly shape: readonly number[];
  readonly bytes: number;
}

interface Layout {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly outputs: readonly OutputLayout[];
  /** The bytes before each output's data, one piece per output, our own copies (never handed out for writing into). */
  readonly heads: readonly Buffer[];
  readonly messageBytes: number;
}

export class AnswerHeadMemo {
  private last: Layout | undefined = undefined;

  constructor(private readonly viewBytes: number) {}

  encode(response: InferResponse): EncodedInferResponse {
    const last = this.last;
    if (last !== undefined && this.fits(response) && sameLayout(last, response)) {
      const outputs = response.outputs;
      const chunks: Uint8Array[] = new Array<Uint8Array>(2 * outputs.length);
      for (let i = 0; i < outputs.length; i++) {
        chunks[2 * i] = last.heads[i]!;
        chunks[2 * i + 1] = outputs[i]!.data;
      }
      return { chunks, messageBytes: last.messageBytes };
    }
    const encoded = encodeInferResponseFramed(response, this.viewBytes);
    if (this.fits(response)) this.last = layoutOf(response, encoded);
    return encoded;
  }

  /** An answer whose encoding is head pieces and output views only, alternating, and depends on nothing but the layout. */
  private fits(response: InferResponse): boolean {
    if (response.id !== '' || response.outputs.length === 0) return false;
    if (response.parameters !== undefined) for (const _ in response.parameters) return false;
    for (const output of response.outputs) if (output.data.length < this.viewBytes) return false;
    return true;
  }
}

function layoutOf(response: InferResponse, encoded: EncodedInferResponse): Layout | undefined {
  const outputs = response.outputs;
  // The encoder's chunks alternate head piece and output data; anything else is not remembered.
  if (encoded.chunks.length !== 2 * outputs.length) return undefined;
  for (let i = 0; i < outputs.length; i++) if (encoded.chunks[2 * i + 1] !== outputs[i]!.data) return undefined;
  return {
    modelName: response.modelName,
    modelVersion: response.modelVersion,
    outputs: outputs.map(outputLayout),
    heads: outputs.map((_, i) => Buffer.from(encoded.chunks[2 * i]!)),
    messageBytes: encoded.messageBytes,
  };
}

function outputLayout(tensor: Tensor): OutputLayout {
  return { name: tensor.name, datatype: tensor.datatype, shape: [...tensor.shape], bytes: tensor.data.length };
}

function sameLayout(layout: Layout, response: InferResponse): boolean {
  if (layout.modelName !== response.modelName || layout.modelVersion !== response.modelVersion) return false;
  const outputs = response.outputs;
  if (outputs.length !== layout.outputs.length) return false;
  for (let i = 0; i < outputs.length; i++) {
    const known = layout.outputs[i]!;
    const output = outputs[i]!;
    if (known.name !== output.name || known.datatype !== output.datatype || known.bytes !== output.data.length) return false;
    const shape = output.shape;
    if (shape.length !== known.shape.length) return false;
    for (let d = 0; d < shape.length; d++) if (shape[d] !== known.shape[d]) return false;
  }
  return true;
}
