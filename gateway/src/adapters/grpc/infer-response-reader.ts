/**
 * The node's ModelInferResponse read straight from its bytes into the answer the gateway passes on
 * (an InferResponse whose outputs are views of the message), in one pass: the plain answers a node
 * sends (names, id, outputs with datatype and shape, raw_output_contents), each output checked against
 * its shape as inferResponseFromProto checks it. Anything else (parameters, typed contents, an unknown
 * field, an odd wire type or varint, a datatype or size that fails a check) goes the reference way,
 * protobuf-es then inferResponseFromProto, so the answer or the error is always theirs.
 *
 * Why one pass: a gRPC client's miss forwards the node's message as received (forwarded-response.ts)
 * and reads no output; the two-step read built a protobuf-shaped copy of every output (BigInt
 * dimensions, strings built per character) only to build the tensors from it (issue 17).
 */
import { ModelInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import { decodeMessage, inferResponseFromProto } from '../../../../shared/src/grpc/index.js';
import { countBytesElements, datatypeByteSize, DATATYPES, type Datatype, type InferResponse, type Tensor } from '../../../../shared/src/tensors/index.js';

// Fatal, as protobuf-es is: a string that is not UTF-8 goes to it, for its error.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The longest string read byte by byte when it is ASCII; longer ones go to TextDecoder. */
const SHORT_ASCII = 24;

/** A field, layout or value this reader leaves to the reference read. */
class NotPlain extends Error {}

/**
 * The short ASCII strings of the last answers, by where they stood (model name, version, each output's
 * name): answers of one model repeat them, and comparing a few bytes is cheaper than a new string.
 */
const remembered: string[] = [];
const REMEMBERED_SLOTS = 16;

function sameAscii(text: string | undefined, bytes: Uint8Array, start: number, end: number): text is string {
  if (text === undefined || text.length !== end - start) return false;
  for (let i = start; i < end; i++) if (text.charCodeAt(i - start) !== bytes[i]) return false;
  return true;
}

class Cursor {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start: number,
    public end: number,
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

  /** Skips a length-delimited field's body and answers where it starts (it ends at `pos`). */
  delimited(): number {
    const length = this.varint();
    const start = this.pos;
    if (length > this.end - start) throw new NotPlain();
    this.pos = start + length;
    return start;
  }

  /** A string field; `slot` (below REMEMBERED_SLOTS) is where its last value is remembered, -1 for none. */
  string(slot: number): string {
    const start = this.delimited();
    const end = this.pos;
    if (end - start > SHORT_ASCII) return this.decode(start, end);
    const last = slot < 0 ? undefined : remembered[slot];
    if (sameAscii(last, this.bytes, start, end)) return last;
    // Short ASCII read in JS skips TextDecoder's call into C++; ASCII is valid UTF-8: the same string either way.
    let text = '';
    for (let i = start; i < end; i++) {
      const byte = this.bytes[i]!;
      if (byte >= 0x80) return this.decode(start, end);
      text += String.fromCharCode(byte);
    }
    if (slot >= 0) remembered[slot] = text;
    return text;
  }

  /** A datatype field as one of the protocol's names (the constant itself), or not plain. */
  datatype(): Datatype {
    const start = this.delimited();
    for (const datatype of DATATYPES) if (sameAscii(datatype, this.bytes, start, this.pos)) return datatype;
    throw new NotPlain();
  }

  private decode(start: number, end: number): string {
    try {
      return utf8.decode(this.bytes.subarray(start, end));
    } catch {
      throw new NotPlain();
    }
  }
}

/** An output as read: its tensor but for the data, and how many elements its shape holds. */
interface OutputHead {
  name: string;
  datatype: Datatype | undefined;
  shape: number[];
  elements: number;
}

/**
 * The output whose body `c` is at (`c.pos` to `end`), read with the same cursor (its end narrowed to
 * the body's, then put back): no cursor or bounds pair per output or per shape.
 */
function readOutput(c: Cursor, end: number, index: number): OutputHead {
  const out: OutputHead = { name: '', datatype: undefined, shape: [], elements: 1 };
  const nameSlot = 2 + index < REMEMBERED_SLOTS ? 2 + index : -1;
  const outer = c.end;
  c.end = end;
  while (c.pos < end) {
    const tag = c.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === 2) out.name = c.string(nameSlot);
    else if (field === 2 && wire === 2) out.datatype = c.datatype();
    else if (field === 3 && wire === 2) {
      // Packed dimensions.
      const start = c.delimited();
      const stop = c.pos;
      c.pos = start;
      c.end = stop;
      while (c.pos < stop) addDimension(out, c.varint());
      c.end = end;
    } else if (field === 3 && wire === 0) addDimension(out, c.varint());
    else throw new NotPlain();
  }
  c.end = outer;
  return out;
}

function addDimension(out: OutputHead, dim: number): void {
  out.shape.push(dim);
  out.elements *= dim;
  // Past the safe integers the reference says which dimension (elementCount): its message, not ours.
  if (out.elements > Number.MAX_SAFE_INTEGER) throw new NotPlain();
}

/** The tensor of `head` over `data`, when `data` holds exactly what its shape says; else not plain. */
function checkedTensor(head: OutputHead, data: Uint8Array): Tensor {
  const datatype = head.datatype;
  // No datatype: the reference names the empty one in its error.
  if (datatype === undefined) throw new NotPlain();
  const size = datatypeByteSize(datatype);
  if (size === null) {
    // BYTES: the reference's own count (it throws on a truncated element: then its message, not ours).
    let found: number;
    try {
      found = countBytesElements(data, 'output', head.elements);
    } catch {
      throw new NotPlain();
    }
    if (found !== head.elements) throw new NotPlain();
  } else if (data.length !== head.elements * size) throw new NotPlain();
  return { name: head.name, datatype, shape: head.shape, data };
}

function readPlain(bytes: Uint8Array): InferResponse {
  let modelName = '';
  let modelVersion = '';
  let id = '';
  const heads: OutputHead[] = [];
  const raw: Uint8Array[] = [];
  const c = new Cursor(bytes, 0, bytes.length);
  while (c.pos < bytes.length) {
    const tag = c.varint();
    const field = Math.floor(tag / 8);
    if ((tag & 7) !== 2) throw new NotPlain();
    if (field === 1) modelName = c.string(0);
    else if (field === 2) modelVersion = c.string(1);
    else if (field === 3) id = c.string(-1);
    else if (field === 5) {
      const start = c.delimited();
      const end = c.pos;
      c.pos = start;
      heads.push(readOutput(c, end, heads.length));
    } else if (field === 6) {
      const start = c.delimited();
      raw.push(bytes.subarray(start, c.pos));
    } else throw new NotPlain();
  }
  // One raw entry per output, in order; an output without one needs typed contents (the reference's error).
  if (raw.length !== heads.length) throw new NotPlain();
  const outputs: Tensor[] = [];
  for (let i = 0; i < heads.length; i++) outputs.push(checkedTensor(heads[i]!, raw[i]!));
  return { id, modelName, modelVersion, outputs };
}

/**
 * The answer in `bytes`, as inferResponseFromProto gives it from the method's own deserializer
 * (decodeMessage), its errors included. A Buffer is read through a plain Uint8Array view, so the
 * outputs' data are plain views of the message.
 */
export function readNodeAnswer(bytes: Uint8Array): InferResponse {
  const plain = Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
  try {
    return readPlain(plain);
  } catch (error) {
    if (!(error instanceof NotPlain)) throw error;
    return inferResponseFromProto(decodeMessage(ModelInferResponseSchema, plain));
  }
}
