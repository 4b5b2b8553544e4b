/**
 * A ModelInferResponse's gRPC answer body straight from an InferResponse, without building the
 * protobuf-es message first: the bytes `toBinary(ModelInferResponseSchema, inferResponseToProto(r))`
 * gives (outputs in raw_output_contents), for a fraction of the CPU. The node encodes one per
 * ModelInfer answer, so this is on its hot path.
 *
 * The body comes framed (the 5-byte gRPC prefix first) as chunks to write in order: one buffer for
 * everything, except outputs of `inlineBelowBytes` or more, which are passed as views of the output
 * (no copy); the caller must not change them until written.
 */
import type { InferResponse } from '../tensors/index.js';
import { GRPC_PREFIX_BYTES, writeGrpcMessagePrefix } from './grpc-frame.js';
import { ProtobufWriter, int64Size, lenFieldSize } from './protobuf-writer.js';
import { mapSize, sizeParameters, writeParameters } from './protobuf-parameters.js';
import { DEFAULT_INLINE_BELOW_BYTES } from './infer-request-encoder.js';

/** Field numbers from grpc_service.proto. */
const RESPONSE = { modelName: 1, modelVersion: 2, id: 3, parameters: 4, outputs: 5, rawOutputContents: 6 } as const;
const OUTPUT = { name: 1, datatype: 2, shape: 3 } as const;

export interface EncodedInferResponse {
  /** The framed body, in order. */
  readonly chunks: Uint8Array[];
  /** The message's length (without the prefix). */
  readonly messageBytes: number;
}

const utf8Length = (text: string): number => (text.length === 0 ? 0 : Buffer.byteLength(text, 'utf8'));

export function encodeInferResponseFramed(response: InferResponse, inlineBelowBytes = DEFAULT_INLINE_BELOW_BYTES): EncodedInferResponse {
  const modelNameBytes = utf8Length(response.modelName);
  const modelVersionBytes = utf8Length(response.modelVersion);
  const idBytes = utf8Length(response.id);
  const parameters = sizeParameters(response.parameters);
  const outputs = response.outputs;
  // Per output: name bytes, datatype bytes, packed shape bytes, the InferOutputTensor's size.
  const sizes = new Array<number>(outputs.length * 4);
  let messageBytes =
    (modelNameBytes > 0 ? lenFieldSize(RESPONSE.modelName, modelNameBytes) : 0) +
    (modelVersionBytes > 0 ? lenFieldSize(RESPONSE.modelVersion, modelVersionBytes) : 0) +
    (idBytes > 0 ? lenFieldSize(RESPONSE.id, idBytes) : 0) +
    mapSize(RESPONSE.parameters, parameters);
  let external = 0;
  for (let i = 0; i < outputs.length; i++) {
    const t = outputs[i]!;
    const nameBytes = utf8Length(t.name);
    const datatypeBytes = utf8Length(t.datatype);
    let shapeBytes = 0;
    for (const dim of t.shape) shapeBytes += int64Size(dim);
    const size =
      (nameBytes > 0 ? lenFieldSize(OUTPUT.name, nameBytes) : 0) +
      (datatypeBytes > 0 ? lenFieldSize(OUTPUT.datatype, datatypeBytes) : 0) +
      (shapeBytes > 0 ? lenFieldSize(OUTPUT.shape, shapeBytes) : 0);
    sizes[4 * i] = nameBytes;
    sizes[4 * i + 1] = datatypeBytes;
    sizes[4 * i + 2] = shapeBytes;
    sizes[4 * i + 3] = size;
    messageBytes += lenFieldSize(RESPONSE.outputs, size) + lenFieldSize(RESPONSE.rawOutputContents, t.data.length);
    if (t.data.length >= inlineBelowBytes) external += t.data.length;
  }

  const head = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + messageBytes - external);
  writeGrpcMessagePrefix(head, messageBytes);
  const w = new ProtobufWriter(head, GRPC_PREFIX_BYTES);
  if (modelNameBytes > 0) w.string(RESPONSE.modelName, response.modelName, modelNameBytes);
  if (modelVersionBytes > 0) w.string(RESPONSE.modelVersion, response.modelVersion, modelVersionBytes);
  if (idBytes > 0) w.string(RESPONSE.id, response.id, idBytes);
  writeParameters(w, RESPONSE.parameters, parameters);
  for (let i = 0; i < outputs.length; i++) {
    const t = outputs[i]!;
    w.lenHeader(RESPONSE.outputs, sizes[4 * i + 3]!);
    if (sizes[4 * i]! > 0) w.string(OUTPUT.name, t.name, sizes[4 * i]!);
    if (sizes[4 * i + 1]! > 0) w.string(OUTPUT.datatype, t.datatype, sizes[4 * i + 1]!);
    if (sizes[4 * i + 2]! > 0) {
      w.lenHeader(OUTPUT.shape, sizes[4 * i + 2]!);
      for (const dim of t.shape) w.int64(dim);
    }
  }
  const chunks: Uint8Array[] = [];
  let cut = 0;
  for (const t of outputs) {
    if (t.data.length < inlineBelowBytes) {
      w.bytes(RESPONSE.rawOutputContents, t.data);
      continue;
    }
    w.lenHeader(RESPONSE.rawOutputContents, t.data.length);
    chunks.push(head.subarray(cut, w.pos), t.data);
    cut = w.pos;
  }
  if (w.pos !== head.length) throw new Error(`ModelInferResponse encoder: wrote ${w.pos} of ${head.length} bytes`);
  if (cut < head.length) chunks.push(head.subarray(cut));
  return { chunks, messageBytes };
}
