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
import { checkedTensor, decodeMessage, inferResponseFromProto, NotPlain, readTensorHead, RememberedStrings, WireCursor, type TensorHead } from '../../../../shared/src/grpc/index.js';
import type { InferResponse, Tensor } from '../../../../shared/src/tensors/index.js';

/** Slot 0: the model name, 1: its version, 2 on: each output's name. */
const remembered = new RememberedStrings(16);

function readPlain(bytes: Uint8Array): InferResponse {
  let modelName = '';
  let modelVersion = '';
  let id = '';
  const heads: TensorHead[] = [];
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
      heads.push(readTensorHead(c, end, remembered, 2 + heads.length));
    } else if (field === 6) {
      const start = c.delimited();
      raw.push(bytes.subarray(start, c.pos));
    } else throw new NotPlain();
  }
  // One raw entry per output, in order; an output without one needs typed contents (the reference's error).
  if (raw.length !== heads.length) throw new NotPlain();
  const outputs: Tensor[] = [];
  for (let i = 0; i < heads.length; i++) outputs.push(checkedTensor(heads[i]!, raw[i]!, 'output'));
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
