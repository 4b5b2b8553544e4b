/**
 * A ModelInferRequest's gRPC request body straight from an InferRequest, without building the
 * protobuf-es message first: the same message `toBinary(ModelInferRequestSchema, inferRequestToProto(r))`
 * gives (inputs in raw_input_contents, parameters as infer-codec / parameter-codec convert them), at a
 * fraction of the cost. The gateway encodes one per upstream call, so this is on its hot path.
 *
 * The body comes framed (the 5-byte gRPC prefix first) as a list of chunks to write in order: one
 * buffer for everything, except tensors of `inlineBelowBytes` or more, which are passed as views of
 * the caller's data instead of being copied.
 */
import { TesseraError } from '../errors/index.js';
import type { InferRequest } from '../tensors/index.js';
import { GRPC_PREFIX_BYTES, writeGrpcMessagePrefix } from './grpc-frame.js';
import { ProtobufWriter, int64Size, lenFieldSize } from './protobuf-writer.js';
import { mapSize, sizeParameters, writeParameters } from './protobuf-parameters.js';

/** Field numbers from grpc_service.proto. */
const REQUEST = { modelName: 1, modelVersion: 2, id: 3, parameters: 4, inputs: 5, outputs: 6, rawInputContents: 7 } as const;
const INPUT = { name: 1, datatype: 2, shape: 3 } as const;
const OUTPUT = { name: 1, parameters: 2 } as const;

const CLASSIFICATION_KEY = 'classification';
/** Below this a tensor is copied into the body; at or above it, it is sent from the caller's memory. */
export const DEFAULT_INLINE_BELOW_BYTES = 16 * 1024;
/**
 * The threshold for writers that cork a message's chunks into one DATA frame (the gateway's upstream call,
 * h2-unary-call.ts's reply): a tensor of 1 KiB or more goes as a view after a small head, so no buffer
 * past Node's 4 KiB slab is made and filled per call (a 4 KB request: ~4 KB less allocated, one copy less).
 */
export const CORKED_VIEW_BYTES = 1024;

export interface EncodedInferRequest {
  /** The framed body, in order. */
  readonly chunks: Uint8Array[];
  /** The message's length (without the prefix). */
  readonly messageBytes: number;
}

const utf8Length = (text: string): number => (text.length === 0 ? 0 : Buffer.byteLength(text, 'utf8'));

interface SizedInput {
  readonly nameBytes: number;
  readonly datatypeBytes: number;
  /** The packed shape's payload size. */
  readonly shapeBytes: number;
  readonly size: number;
}

function sizeInput(name: string, datatype: string, shape: readonly number[]): SizedInput {
  const nameBytes = utf8Length(name);
  const datatypeBytes = utf8Length(datatype);
  let shapeBytes = 0;
  for (const dim of shape) {
    if (!Number.isSafeInteger(dim)) throw TesseraError.invalidArg(`invalid dimension ${dim} in the shape of input '${name}'`);
    shapeBytes += int64Size(dim);
  }
  const size =
    (nameBytes > 0 ? lenFieldSize(INPUT.name, nameBytes) : 0) +
    (datatypeBytes > 0 ? lenFieldSize(INPUT.datatype, datatypeBytes) : 0) +
    (shapeBytes > 0 ? lenFieldSize(INPUT.shape, shapeBytes) : 0);
  return { nameBytes, datatypeBytes, shapeBytes, size };
}

export function encodeInferRequestFramed(request: InferRequest, inlineBelowBytes = DEFAULT_INLINE_BELOW_BYTES): EncodedInferRequest {
  const modelNameBytes = utf8Length(request.modelName);
  const modelVersion = request.modelVersion ?? '';
  const modelVersionBytes = utf8Length(modelVersion);
  const idBytes = utf8Length(request.id);
  const parameters = sizeParameters(request.parameters);
  const inputs = request.inputs.map((t) => sizeInput(t.name, t.datatype, t.shape));
  const outputs = (request.outputs ?? []).map((o) => {
    const nameBytes = utf8Length(o.name);
    const params = o.classification !== undefined ? sizeParameters({ [CLASSIFICATION_KEY]: o.classification }) : [];
    return { nameBytes, params, size: (nameBytes > 0 ? lenFieldSize(OUTPUT.name, nameBytes) : 0) + mapSize(OUTPUT.parameters, params) };
  });

  let messageBytes =
    (modelNameBytes > 0 ? lenFieldSize(REQUEST.modelName, modelNameBytes) : 0) +
    (modelVersionBytes > 0 ? lenFieldSize(REQUEST.modelVersion, modelVersionBytes) : 0) +
    (idBytes > 0 ? lenFieldSize(REQUEST.id, idBytes) : 0) +
    mapSize(REQUEST.parameters, parameters);
  for (const input of inputs) messageBytes += lenFieldSize(REQUEST.inputs, input.size);
  for (const output of outputs) messageBytes += lenFieldSize(REQUEST.outputs, output.size);
  let external = 0;
  for (const t of request.inputs) {
    messageBytes += lenFieldSize(REQUEST.rawInputContents, t.data.length);
    if (t.data.length >= inlineBelowBytes) external += t.data.length;
  }

  const head = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + messageBytes - external);
  writeGrpcMessagePrefix(head, messageBytes);
  const w = new ProtobufWriter(head, GRPC_PREFIX_BYTES);
  if (modelNameBytes > 0) w.string(REQUEST.modelName, request.modelName, modelNameBytes);
  if (modelVersionBytes > 0) w.string(REQUEST.modelVersion, modelVersion, modelVersionBytes);
  if (idBytes > 0) w.string(REQUEST.id, request.id, idBytes);
  writeParameters(w, REQUEST.parameters, parameters);
  request.inputs.forEach((t, i) => {
    const sized = inputs[i]!;
    w.lenHeader(REQUEST.inputs, sized.size);
    if (sized.nameBytes > 0) w.string(INPUT.name, t.name, sized.nameBytes);
    if (sized.datatypeBytes > 0) w.string(INPUT.datatype, t.datatype, sized.datatypeBytes);
    if (sized.shapeBytes > 0) {
      w.lenHeader(INPUT.shape, sized.shapeBytes);
      for (const dim of t.shape) w.int64(dim);
    }
  });
  (request.outputs ?? []).forEach((o, i) => {
    const sized = outputs[i]!;
    w.lenHeader(REQUEST.outputs, sized.size);
    if (sized.nameBytes > 0) w.string(OUTPUT.name, o.name, sized.nameBytes);
    writeParameters(w, OUTPUT.parameters, sized.params);
  });
  const chunks: Uint8Array[] = [];
  let cut = 0;
  for (const t of request.inputs) {
    if (t.data.length < inlineBelowBytes) {
      w.bytes(REQUEST.rawInputContents, t.data);
      continue;
    }
    w.lenHeader(REQUEST.rawInputContents, t.data.length);
    chunks.push(head.subarray(cut, w.pos), t.data);
    cut = w.pos;
  }
  if (w.pos !== head.length) throw new Error(`ModelInferRequest encoder: wrote ${w.pos} of ${head.length} bytes`);
  if (cut < head.length) chunks.push(head.subarray(cut));
  return { chunks, messageBytes };
}

/**
 * A ModelInferRequest forwarded as the client sent it (`wire`, checked by checkForwardableFraming),
 * with what the gateway decided appended after it: `model_version`, `id` and every entry of
 * `request.parameters`. Protobuf merges a repeated singular field as its last value and a repeated map
 * key as its last entry, so the node reads the gateway's values; inputs, outputs and tensor bytes go
 * out untouched, from the client's buffer. `request` must be `wire` as decoded, changed only in those
 * three fields (parameters are only ever set or replaced, never removed).
 */
export function encodeForwardedInferRequestFramed(wire: Uint8Array, request: InferRequest): EncodedInferRequest {
  const modelVersion = request.modelVersion ?? '';
  const versionBytes = utf8Length(modelVersion);
  const idBytes = utf8Length(request.id);
  const parameters = sizeParameters(request.parameters);
  // Both strings are written even when empty: an empty value must override the client's.
  const appended = lenFieldSize(REQUEST.modelVersion, versionBytes) + lenFieldSize(REQUEST.id, idBytes) + mapSize(REQUEST.parameters, parameters);
  const messageBytes = wire.length + appended;
  const prefix = Buffer.allocUnsafe(GRPC_PREFIX_BYTES);
  writeGrpcMessagePrefix(prefix, messageBytes);
  const tail = Buffer.allocUnsafe(appended);
  const w = new ProtobufWriter(tail);
  w.string(REQUEST.modelVersion, modelVersion, versionBytes);
  w.string(REQUEST.id, request.id, idBytes);
  writeParameters(w, REQUEST.parameters, parameters);
  return { chunks: [prefix, wire, tail], messageBytes };
}
