/**
 * A ModelInferRequest decoded by hand for the plain case a client sends on the hot path: ASCII model
 * name, version and id; inputs with a name, a datatype and a packed shape; requested outputs by name;
 * data in raw_input_contents (views of `bytes`, no copy). Anything else (parameters, typed contents,
 * unknown fields, non-ASCII text, a length past the end, a dimension beyond 2^53) makes it give up
 * and the caller decodes with protobuf-es, so every unusual or hostile message gets exactly the
 * reflection path's answer. The result has the fields inferRequestFromProto reads, with the values
 * fromBinary would give (infer-request-scan.test.ts compares both on generated and mutated messages).
 */
import {
  ModelInferRequestSchema,
  ModelInferRequest_InferInputTensorSchema,
  ModelInferRequest_InferRequestedOutputTensorSchema,
  type ModelInferRequest,
  type ModelInferRequest_InferInputTensor,
  type ModelInferRequest_InferRequestedOutputTensor,
} from '../gen/grpc_service_pb.js';
import { decodeMessage } from './service-definition.js';

const WIRE_LEN = 2;
/** Buffer's native Latin-1 reader; it takes any Uint8Array as `this`. */
const latin1Slice = Buffer.prototype.latin1Slice as (this: Uint8Array, start: number, end: number) => string;
const TWO_53 = 2 ** 53;

/** A cursor over `bytes` up to `end`; a read returns -1 when the bytes do not allow it (the scan gives up). */
class Scanner {
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  /** A varint below 2^53, or -1 (too long, too large, or past the end). */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= this.end) return -1;
      const byte = this.bytes[this.pos++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value < TWO_53 ? value : -1;
      scale *= 128;
    }
    return -1;
  }

  /** A length-delimited field's tag: its field number, or -1 for another wire type or a tag out of range. */
  lenField(): number {
    const tag = this.varint();
    if (tag < 0 || tag > 0x7fffffff || (tag & 7) !== WIRE_LEN) return -1;
    return tag >>> 3;
  }

  /** The end of the length-delimited payload that starts here, or -1 when it would pass this scanner's end. */
  lenEnd(): number {
    const length = this.varint();
    if (length < 0 || length > this.end - this.pos) return -1;
    return this.pos + length;
  }

  /** ASCII text up to `end`, or undefined when a byte is not ASCII (UTF-8 decoding is left to protobuf-es). */
  ascii(end: number): string | undefined {
    const bytes = this.bytes;
    for (let i = this.pos; i < end; i++) if (bytes[i]! >= 0x80) return undefined;
    // ASCII bytes read as Latin-1 are the same text: one string made natively, not one per character added.
    const text = latin1Slice.call(bytes, this.pos, end);
    this.pos = end;
    return text;
  }
}

function scanInput(s: Scanner): ModelInferRequest_InferInputTensor | undefined {
  let name = '';
  let datatype = '';
  const shape: bigint[] = [];
  while (s.pos < s.end) {
    const field = s.lenField();
    const end = s.lenEnd();
    if (end < 0) return undefined;
    if (field === 1 || field === 2) {
      const text = s.ascii(end);
      if (text === undefined) return undefined;
      if (field === 1) name = text;
      else datatype = text;
    } else if (field === 3) {
      const packed = new Scanner(s.bytes, s.pos, end);
      while (packed.pos < end) {
        const dim = packed.varint();
        if (dim < 0) return undefined;
        shape.push(BigInt(dim));
      }
      s.pos = end;
    } else {
      return undefined;
    }
  }
  return { $typeName: ModelInferRequest_InferInputTensorSchema.typeName, name, datatype, shape, parameters: {} };
}

function scanOutput(s: Scanner): ModelInferRequest_InferRequestedOutputTensor | undefined {
  let name = '';
  while (s.pos < s.end) {
    if (s.lenField() !== 1) return undefined;
    const end = s.lenEnd();
    if (end < 0) return undefined;
    const text = s.ascii(end);
    if (text === undefined) return undefined;
    name = text;
  }
  return { $typeName: ModelInferRequest_InferRequestedOutputTensorSchema.typeName, name, parameters: {} };
}

/** The plain ModelInferRequest in `bytes`, or undefined when it is not plain (decode it with protobuf-es). */
export function scanPlainInferRequest(bytes: Uint8Array): ModelInferRequest | undefined {
  const s = new Scanner(bytes, 0, bytes.length);
  let modelName = '';
  let modelVersion = '';
  let id = '';
  const inputs: ModelInferRequest_InferInputTensor[] = [];
  const outputs: ModelInferRequest_InferRequestedOutputTensor[] = [];
  const rawInputContents: Uint8Array[] = [];
  while (s.pos < bytes.length) {
    const field = s.lenField();
    const end = s.lenEnd();
    if (end < 0) return undefined;
    if (field === 1 || field === 2 || field === 3) {
      const text = s.ascii(end);
      if (text === undefined) return undefined;
      if (field === 1) modelName = text;
      else if (field === 2) modelVersion = text;
      else id = text;
    } else if (field === 5 || field === 6) {
      const sub = new Scanner(bytes, s.pos, end);
      if (field === 5) {
        const input = scanInput(sub);
        if (input === undefined) return undefined;
        inputs.push(input);
      } else {
        const output = scanOutput(sub);
        if (output === undefined) return undefined;
        outputs.push(output);
      }
      s.pos = end;
    } else if (field === 7) {
      rawInputContents.push(bytes.subarray(s.pos, end));
      s.pos = end;
    } else {
      return undefined;
    }
  }
  // The literal create() would build (checked against it by infer-request-scan.test.ts), without its reflection.
  return { $typeName: ModelInferRequestSchema.typeName, modelName, modelVersion, id, parameters: {}, inputs, outputs, rawInputContents };
}

/** A ModelInferRequest from its bytes: the plain scan when it applies, else protobuf-es (decodeMessage). */
export function decodeModelInferRequest(bytes: Uint8Array): ModelInferRequest {
  // Plain Uint8Array views, as decodeMessage gives: a Buffer's subarray would be a Buffer.
  const plain = Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
  return scanPlainInferRequest(plain) ?? decodeMessage(ModelInferRequestSchema, plain);
}
