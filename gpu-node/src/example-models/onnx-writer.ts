/**
 * A minimal encoder for ONNX `ModelProto`, enough to build test and example models without the
 * Python `onnx` package or a generated `onnx.proto` binding.
 *
 * Field numbers follow onnx/onnx.proto (IR version 8). onnx.proto is a proto2 file, so repeated
 * scalars (dims, ints) are written unpacked, one tag per element, as the reference encoder does;
 * every protobuf parser accepts that form.
 *
 * Initializer tensors go into `raw_data` as the typed array's bytes. ONNX requires raw_data to be
 * little-endian, which is what typed arrays hold on every platform Node supports in practice
 * (x64, arm64); `encodeModel` refuses to run on a big-endian host rather than write wrong weights.
 */
import { endianness } from 'node:os';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

/** `TensorProto.DataType` values. */
export const OnnxDataType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  UINT16: 4,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
  UINT32: 12,
  UINT64: 13,
  BFLOAT16: 16,
} as const;
export type OnnxDataType = (typeof OnnxDataType)[keyof typeof OnnxDataType];

/** A dimension: a number is a fixed size (`dim_value`), a string a named dynamic one (`dim_param`). */
export type OnnxDim = number | string;

export interface OnnxValueInfo {
  readonly name: string;
  readonly elemType: OnnxDataType;
  readonly shape: readonly OnnxDim[];
}

export type OnnxAttribute =
  | { readonly name: string; readonly type: 'float'; readonly value: number }
  | { readonly name: string; readonly type: 'int'; readonly value: number }
  | { readonly name: string; readonly type: 'string'; readonly value: string }
  | { readonly name: string; readonly type: 'floats'; readonly value: readonly number[] }
  | { readonly name: string; readonly type: 'ints'; readonly value: readonly number[] };

export interface OnnxNode {
  readonly opType: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly name?: string;
  /** Empty (the default ONNX domain) unless set. */
  readonly domain?: string;
  readonly attributes?: readonly OnnxAttribute[];
}

/** A constant tensor stored in the graph; its element type follows from the array's type. */
export interface OnnxInitializer {
  readonly name: string;
  readonly dims: readonly number[];
  readonly data: Float32Array | Int32Array | BigInt64Array;
}

export interface OnnxGraph {
  readonly name: string;
  readonly nodes: readonly OnnxNode[];
  readonly inputs: readonly OnnxValueInfo[];
  readonly outputs: readonly OnnxValueInfo[];
  readonly initializers?: readonly OnnxInitializer[];
}

export interface OnnxModel {
  readonly graph: OnnxGraph;
  /** Default 8: onnxruntime 1.30 reads IR 3..10; 8 pairs with opset 17. */
  readonly irVersion?: number;
  /** Default-domain opset, default 17. */
  readonly opsetVersion?: number;
  readonly producerName?: string;
  readonly producerVersion?: string;
  readonly docString?: string;
}

export const DEFAULT_IR_VERSION = 8;
export const DEFAULT_OPSET_VERSION = 17;

// AttributeProto.AttributeType values.
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const ATTR_STRING = 3;
const ATTR_FLOATS = 6;
const ATTR_INTS = 7;

/** Protobuf's own limit on a message; larger ONNX models need external data files, which we do not write. */
const MAX_MESSAGE_BYTES = 2 ** 31 - 1;

/**
 * Encodes a model to the bytes of a `.onnx` file.
 *
 * The small messages go through `BinaryWriter`; weights do not. The model is assembled from a list of
 * chunks whose length prefixes are computed up front, and the initializers' bytes are copied exactly
 * once, into the result. Fork/join over ~100 MB of weights would instead grow the writer's buffer by
 * doubling and slice it at the end: several times slower and three times the memory.
 */
export function encodeModel(model: OnnxModel): Uint8Array {
  if (endianness() !== 'LE') {
    throw new Error('onnx-writer: raw_data must be little-endian; this host is big-endian');
  }
  const head = new BinaryWriter();
  head.tag(1, WireType.Varint).int64(model.irVersion ?? DEFAULT_IR_VERSION); // ir_version
  if (model.producerName !== undefined) head.tag(2, WireType.LengthDelimited).string(model.producerName);
  if (model.producerVersion !== undefined) head.tag(3, WireType.LengthDelimited).string(model.producerVersion);
  if (model.docString !== undefined) head.tag(6, WireType.LengthDelimited).string(model.docString);
  const tail = new BinaryWriter();
  tail.tag(8, WireType.LengthDelimited).fork(); // opset_import: OperatorSetIdProto
  tail.tag(1, WireType.LengthDelimited).string(''); // domain: the default ONNX domain
  tail.tag(2, WireType.Varint).int64(model.opsetVersion ?? DEFAULT_OPSET_VERSION);
  tail.join();
  const chunks = [head.finish(), ...delimited(7, graphChunks(model.graph)), tail.finish()];
  const out = new Uint8Array(byteLength(chunks));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

function byteLength(chunks: readonly Uint8Array[]): number {
  return chunks.reduce((n, c) => n + c.byteLength, 0);
}

/** A length-delimited field holding `chunks`: its tag and length prefix, then the chunks themselves. */
function delimited(fieldNo: number, chunks: readonly Uint8Array[]): Uint8Array[] {
  const length = byteLength(chunks);
  if (length > MAX_MESSAGE_BYTES) {
    throw new Error(`onnx-writer: field ${fieldNo} is ${length} bytes, over protobuf's 2 GiB limit`);
  }
  return [new BinaryWriter().tag(fieldNo, WireType.LengthDelimited).uint32(length).finish(), ...chunks];
}

function graphChunks(graph: OnnxGraph): Uint8Array[] {
  const head = new BinaryWriter();
  for (const node of graph.nodes) {
    head.tag(1, WireType.LengthDelimited).fork();
    writeNode(head, node);
    head.join();
  }
  head.tag(2, WireType.LengthDelimited).string(graph.name);
  const chunks: Uint8Array[] = [head.finish()];
  for (const init of graph.initializers ?? []) chunks.push(...delimited(5, initializerChunks(init)));
  const tail = new BinaryWriter();
  for (const input of graph.inputs) {
    tail.tag(11, WireType.LengthDelimited).fork();
    writeValueInfo(tail, input);
    tail.join();
  }
  for (const output of graph.outputs) {
    tail.tag(12, WireType.LengthDelimited).fork();
    writeValueInfo(tail, output);
    tail.join();
  }
  chunks.push(tail.finish());
  return chunks;
}

function writeNode(w: BinaryWriter, node: OnnxNode): void {
  for (const input of node.inputs) w.tag(1, WireType.LengthDelimited).string(input);
  for (const output of node.outputs) w.tag(2, WireType.LengthDelimited).string(output);
  if (node.name !== undefined) w.tag(3, WireType.LengthDelimited).string(node.name);
  w.tag(4, WireType.LengthDelimited).string(node.opType);
  for (const attr of node.attributes ?? []) {
    w.tag(5, WireType.LengthDelimited).fork();
    writeAttribute(w, attr);
    w.join();
  }
  if (node.domain !== undefined) w.tag(7, WireType.LengthDelimited).string(node.domain);
}

function writeAttribute(w: BinaryWriter, attr: OnnxAttribute): void {
  w.tag(1, WireType.LengthDelimited).string(attr.name);
  switch (attr.type) {
    case 'float':
      w.tag(2, WireType.Bit32).float(attr.value);
      w.tag(20, WireType.Varint).int32(ATTR_FLOAT);
      break;
    case 'int':
      w.tag(3, WireType.Varint).int64(attr.value);
      w.tag(20, WireType.Varint).int32(ATTR_INT);
      break;
    case 'string':
      w.tag(4, WireType.LengthDelimited).string(attr.value);
      w.tag(20, WireType.Varint).int32(ATTR_STRING);
      break;
    case 'floats':
      for (const v of attr.value) w.tag(7, WireType.Bit32).float(v);
      w.tag(20, WireType.Varint).int32(ATTR_FLOATS);
      break;
    case 'ints':
      for (const v of attr.value) w.tag(8, WireType.Varint).int64(v);
      w.tag(20, WireType.Varint).int32(ATTR_INTS);
      break;
  }
}

function initializerType(data: OnnxInitializer['data']): OnnxDataType {
  if (data instanceof Float32Array) return OnnxDataType.FLOAT;
  if (data instanceof Int32Array) return OnnxDataType.INT32;
  return OnnxDataType.INT64;
}

/** A TensorProto as chunks: the small fields, then raw_data as a view over the array's own bytes. */
function initializerChunks(init: OnnxInitializer): Uint8Array[] {
  const count = init.dims.reduce((a, b) => a * b, 1);
  if (count !== init.data.length) {
    throw new Error(`onnx-writer: initializer ${init.name} has ${init.data.length} elements, dims say ${count}`);
  }
  const w = new BinaryWriter();
  for (const d of init.dims) w.tag(1, WireType.Varint).int64(d); // dims
  w.tag(2, WireType.Varint).int32(initializerType(init.data)); // data_type
  w.tag(8, WireType.LengthDelimited).string(init.name); // name
  w.tag(9, WireType.LengthDelimited).uint32(init.data.byteLength); // raw_data: tag and length; bytes follow
  return [w.finish(), new Uint8Array(init.data.buffer, init.data.byteOffset, init.data.byteLength)];
}

function writeValueInfo(w: BinaryWriter, info: OnnxValueInfo): void {
  w.tag(1, WireType.LengthDelimited).string(info.name);
  w.tag(2, WireType.LengthDelimited).fork(); // type: TypeProto
  w.tag(1, WireType.LengthDelimited).fork(); // tensor_type: TypeProto.Tensor
  w.tag(1, WireType.Varint).int32(info.elemType);
  w.tag(2, WireType.LengthDelimited).fork(); // shape: TensorShapeProto
  for (const dim of info.shape) {
    w.tag(1, WireType.LengthDelimited).fork(); // dim: Dimension
    if (typeof dim === 'number') w.tag(1, WireType.Varint).int64(dim);
    else w.tag(2, WireType.LengthDelimited).string(dim);
    w.join();
  }
  w.join();
  w.join();
  w.join();
}

/**
 * The encoded bytes of single graph parts, for tools that splice new parts into an existing model's
 * graph at the wire level (see silero-vad.ts) instead of building the whole graph here.
 */
export function encodeNode(node: OnnxNode): Uint8Array {
  const w = new BinaryWriter();
  writeNode(w, node);
  return w.finish();
}

export function encodeValueInfo(info: OnnxValueInfo): Uint8Array {
  const w = new BinaryWriter();
  writeValueInfo(w, info);
  return w.finish();
}

export function encodeInitializer(init: OnnxInitializer): Uint8Array {
  const chunks = initializerChunks(init);
  const out = new Uint8Array(byteLength(chunks));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
