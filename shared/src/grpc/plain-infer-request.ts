/**
 * A client's ModelInferRequest read in one pass from its bytes into the InferRequest the pipeline takes,
 * for the plain requests of the hot path: model name, version and id; inputs with a name, a datatype
 * and a shape; requested outputs by name; data in raw_input_contents (views of the message). Each
 * input is checked as inferRequestFromProto checks it (one raw entry per input, no name twice, bytes
 * that fill the shape). Anything else, or any check that fails, answers undefined: the caller takes the
 * reference path (decodeModelInferRequest, then inferRequestFromProto in frontInferAnswer), which
 * names the error in the order it always has.
 *
 * Why: the two-step read built a protobuf-shaped message (BigInt dimensions, strings per character)
 * only to build the tensors from it, on every gRPC call (issue 17: the request decode was +9.5 µs of a
 * gRPC miss over an HTTP one). The gateway's front door and the node's ModelInfer fast path both read
 * this way (issue 18: the proto-shaped request was the node's largest allocation per gRPC call).
 */
import type { InferRequest, RequestedOutput, Tensor } from '../tensors/index.js';
import { checkedTensor, readTensorHead, type TensorHead } from './plain-tensor.js';
import { namesSeenFor, repeatsEarlierName } from './repeated-names.js';
import { NotPlain, RememberedStrings, WireCursor } from './wire-cursor.js';

/** What the front door reads of a plain request: its names as sent, and the request itself. */
export interface PlainInferRequest {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly id: string;
  readonly request: InferRequest;
}

/** Slot 0: the model name, 1: its version, 2-9: inputs' names, 10-15: requested outputs' names. */
const remembered = new RememberedStrings(16);
const OUTPUT_SLOTS = 10;

function readOutput(c: WireCursor, end: number, index: number): RequestedOutput {
  let name = '';
  const outer = c.end;
  c.end = end;
  while (c.pos < end) {
    if (c.varint() !== 0x0a) throw new NotPlain(); // field 1, length-delimited: the name alone
    name = c.string(remembered, OUTPUT_SLOTS + index);
  }
  c.end = outer;
  return { name };
}

function readPlain(bytes: Uint8Array): PlainInferRequest {
  let modelName = '';
  let modelVersion = '';
  let id = '';
  const heads: TensorHead[] = [];
  const outputs: RequestedOutput[] = [];
  const raw: Uint8Array[] = [];
  const c = new WireCursor(bytes, 0, bytes.length);
  while (c.pos < bytes.length) {
    const tag = c.varint();
    const field = Math.floor(tag / 8);
    if ((tag & 7) !== 2) throw new NotPlain();
    if (field === 1) modelName = c.string(remembered, 0);
    else if (field === 2) modelVersion = c.string(remembered, 1);
    else if (field === 3) id = c.string();
    else if (field === 5 || field === 6) {
      const start = c.delimited();
      const end = c.pos;
      c.pos = start;
      if (field === 5) heads.push(readTensorHead(c, end, remembered, heads.length < OUTPUT_SLOTS - 2 ? 2 + heads.length : remembered.slots));
      else outputs.push(readOutput(c, end, outputs.length));
    } else if (field === 7) {
      const start = c.delimited();
      raw.push(bytes.subarray(start, c.pos));
    } else throw new NotPlain();
  }
  // One raw entry per input, in order (an input without one would need typed contents).
  if (raw.length !== heads.length) throw new NotPlain();
  const inputs: Tensor[] = [];
  const seen = namesSeenFor(heads.length);
  for (let i = 0; i < heads.length; i++) {
    // A name given twice: the reference path names the error.
    if (repeatsEarlierName(heads, i, seen)) throw new NotPlain();
    inputs.push(checkedTensor(heads[i]!, raw[i]!, 'input'));
  }
  // The object inferRequestFromProto builds for such a message; the optional fields set in place, not
  // spread in (a spread makes an object to copy from, and the copy a slower object).
  const request: { -readonly [K in keyof InferRequest]: InferRequest[K] } = { id, modelName, inputs, parameters: {} };
  if (modelVersion !== '') request.modelVersion = modelVersion;
  if (outputs.length > 0) request.outputs = outputs;
  return { modelName, modelVersion, id, request };
}

/**
 * The plain request in `bytes` (a whole ModelInferRequest message), checked, or undefined for the
 * reference path. The inputs' data are plain Uint8Array views of the message, as protobuf-es gives.
 */
export function readPlainInferRequest(bytes: Uint8Array): PlainInferRequest | undefined {
  const plain = Buffer.isBuffer(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
  try {
    return readPlain(plain);
  } catch (error) {
    if (error instanceof NotPlain) return undefined;
    throw error;
  }
}
