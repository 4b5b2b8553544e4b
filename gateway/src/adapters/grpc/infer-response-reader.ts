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
import {
  addDimension,
  decodeMessage,
  inferResponseFromProto,
  NotPlain,
  readPackedDimensions,
  RememberedStrings,
  WireCursor,
  type ShapeRead,
} from '../../../../shared/src/grpc/index.js';
import { countBytesElements, datatypeByteSize, type Datatype, type InferResponse, type Tensor } from '../../../../shared/src/tensors/index.js';

/** Slot 0: the model name, 1: its version, 2 on: each output's name. */
const remembered = new RememberedStrings(16);

/** An output as read: its tensor but for the data. */
interface OutputHead extends ShapeRead {
  name: string;
  datatype: Datatype | undefined;
}

/** The output whose body ends at `end`, read with the same cursor (its end narrowed, then put back). */
function readOutput(c: WireCursor, end: number, index: number): OutputHead {
  const out: OutputHead = { name: '', datatype: undefined, shape: [], elements: 1 };
  const outer = c.end;
  c.end = end;
  while (c.pos < end) {
    const tag = c.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === 2) out.name = c.string(remembered, 2 + index);
    else if (field === 2 && wire === 2) out.datatype = c.datatype();
    else if (field === 3 && wire === 2) readPackedDimensions(c, out);
    else if (field === 3 && wire === 0) addDimension(out, c.varint());
    else throw new NotPlain();
  }
  c.end = outer;
  return out;
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
  const c = new WireCursor(bytes, 0, bytes.length);
  while (c.pos < bytes.length) {
    const tag = c.varint();
    const field = Math.floor(tag / 8);
    if ((tag & 7) !== 2) throw new NotPlain();
    if (field === 1) modelName = c.string(remembered, 0);
    else if (field === 2) modelVersion = c.string(remembered, 1);
    else if (field === 3) id = c.string();
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
