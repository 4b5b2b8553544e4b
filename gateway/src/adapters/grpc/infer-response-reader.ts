/**
 * The node's ModelInferResponse read straight from its bytes, for the answers the node sends: names,
 * id, outputs with datatype and shape, and raw_output_contents. Anything else (parameters, typed
 * contents, an unknown field, a wire type or varint out of the ordinary) goes to protobuf-es, so
 * what this returns is always what the method's deserializer would have, and every check after it
 * (inferResponseFromProto) is unchanged.
 *
 * Why: protobuf-es decodes by reflection, 3.5% of a cache miss's CPU at concurrency 1 on the
 * gateway (docs/benchmarks.md, "Gateway latency at concurrency 1").
 */
import { ModelInferResponseSchema, type ModelInferResponse } from '../../../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage } from '../../../../shared/src/grpc/index.js';

// Fatal, as protobuf-es is: a string that is not UTF-8 goes to it, for its error.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The longest string read byte by byte when it is ASCII; longer ones go to TextDecoder. */
const SHORT_ASCII = 24;

/** A field or layout this reader leaves to protobuf-es. */
class NotPlain extends Error {}

class Cursor {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  /** A varint of at most 7 bytes (below 2^49): longer ones (negatives, huge values) are not plain. */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 7; i++) {
      if (this.pos >= this.end) throw new NotPlain();
      const byte = this.bytes[this.pos++]!;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 128;
    }
    throw new NotPlain();
  }

  /** The bounds of a length-delimited field's body. */
  delimited(): [number, number] {
    const length = this.varint();
    const start = this.pos;
    if (length > this.end - start) throw new NotPlain();
    this.pos = start + length;
    return [start, this.pos];
  }

  string(): string {
    const [start, end] = this.delimited();
    // Names and datatypes are short ASCII: read in JS they skip TextDecoder's call into C++ (about half
    // the cost each, six strings an answer of `simple`). ASCII is valid UTF-8: the same string either way.
    if (end - start <= SHORT_ASCII) {
      let text = '';
      for (let i = start; i < end; i++) {
        const byte = this.bytes[i]!;
        if (byte >= 0x80) return this.decode(start, end);
        text += String.fromCharCode(byte);
      }
      return text;
    }
    return this.decode(start, end);
  }

  private decode(start: number, end: number): string {
    try {
      return utf8.decode(this.bytes.subarray(start, end));
    } catch {
      throw new NotPlain();
    }
  }
}

interface PlainOutput {
  name: string;
  datatype: string;
  shape: bigint[];
  parameters: Record<string, never>;
  contents: undefined;
}

function readOutput(bytes: Uint8Array, start: number, end: number): PlainOutput {
  const out: PlainOutput = { name: '', datatype: '', shape: [], parameters: {}, contents: undefined };
  const c = new Cursor(bytes, start, end);
  while (c.pos < end) {
    const tag = c.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === 2) out.name = c.string();
    else if (field === 2 && wire === 2) out.datatype = c.string();
    else if (field === 3 && wire === 2) {
      const [s, e] = c.delimited();
      const dims = new Cursor(bytes, s, e);
      while (dims.pos < e) out.shape.push(BigInt(dims.varint()));
    } else if (field === 3 && wire === 0) out.shape.push(BigInt(c.varint()));
    else throw new NotPlain();
  }
  return out;
}

function readPlain(bytes: Uint8Array): ModelInferResponse {
  let modelName = '';
  let modelVersion = '';
  let id = '';
  const outputs: PlainOutput[] = [];
  const rawOutputContents: Uint8Array[] = [];
  const c = new Cursor(bytes, 0, bytes.length);
  while (c.pos < bytes.length) {
    const tag = c.varint();
    const field = Math.floor(tag / 8);
    if ((tag & 7) !== 2) throw new NotPlain();
    if (field === 1) modelName = c.string();
    else if (field === 2) modelVersion = c.string();
    else if (field === 3) id = c.string();
    else if (field === 5) outputs.push(readOutput(bytes, ...c.delimited()));
    else if (field === 6) {
      const [s, e] = c.delimited();
      rawOutputContents.push(bytes.subarray(s, e));
    } else throw new NotPlain();
  }
  // The fields inferResponseFromProto reads, as protobuf-es would have set them.
  return { modelName, modelVersion, id, parameters: {}, outputs, rawOutputContents } as unknown as ModelInferResponse;
}

/**
 * `bytes` as the method's own deserializer (decodeMessage) reads them, its errors included: a Buffer
 * is read through a plain Uint8Array view, so the raw outputs are plain views too.
 */
export function readInferResponse(bytes: Uint8Array): ModelInferResponse {
  const plain = Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
  try {
    return readPlain(plain);
  } catch (error) {
    if (!(error instanceof NotPlain)) throw error;
    return decodeMessage(ModelInferResponseSchema, plain);
  }
}
