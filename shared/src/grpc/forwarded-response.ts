/**
 * A node's ModelInferResponse forwarded to a gRPC client as the node sent it (issue 17: bytes, not
 * tensors). The gateway's transport decodes the node's answer (the dispatcher and the KServe HTTP body
 * need the tensors) and records here which bytes each decoded response came from; the gRPC front door
 * then writes those bytes instead of encoding the tensors again, with the client's request id put in.
 *
 * Identity is the contract: a response the gateway changed (a sequence's id put back, anything else)
 * is a new object, has no record, and is encoded from its fields as before.
 */
import type { InferResponse } from '../tensors/index.js';
import { GRPC_PREFIX_BYTES, writeGrpcMessagePrefix } from './grpc-frame.js';
import { DEFAULT_INLINE_BELOW_BYTES } from './infer-request-encoder.js';
import type { EncodedInferResponse } from './infer-response-encoder.js';
import { ProtobufWriter, lenFieldSize } from './protobuf-writer.js';

const ID_FIELD = 3; // ModelInferResponse.id in grpc_service.proto

/**
 * The record is a non-enumerable own property of the decoded response, not a WeakMap entry: V8's
 * scavenger keeps a WeakMap's values alive until a full collection, so an entry per answer promoted
 * every answer's bytes to the old space (issue 17, 2026-11-28b). Non-enumerable: spreads, Object.assign
 * and JSON skip it, so a changed copy of the response has no record, as with the WeakMap.
 */
const RECEIVED = Symbol('tessera.receivedResponseBytes');
type Recorded = InferResponse & { readonly [RECEIVED]?: Uint8Array };

/** Records that `response` was decoded from `message` (one whole ModelInferResponse, decoded without error). */
export function rememberReceivedResponse(response: InferResponse, message: Uint8Array): void {
  // A frozen or sealed response takes no record: it is encoded from its fields, as any unrecorded one.
  if (Object.isExtensible(response)) Object.defineProperty(response, RECEIVED, { value: message, configurable: true });
}

/** The bytes `response` was decoded from, when it was recorded and is unchanged since. */
export function receivedResponseOf(response: InferResponse): Uint8Array | undefined {
  return Object.hasOwn(response, RECEIVED) ? (response as Recorded)[RECEIVED] : undefined;
}

/**
 * The framed answer: the node's `message` as received (whole, decoded without error, its own id
 * empty) with `id` written into it; uncopied from `inlineBelowBytes` up. The id goes where an encoder puts field 3 (before the
 * first later field), so a node that encodes canonically gives the bytes protobuf-es would; when a
 * field 3 follows that point it goes last instead (the last value of a field is the one read).
 */
export function encodeForwardedInferResponseFramed(message: Uint8Array, id: string, inlineBelowBytes = DEFAULT_INLINE_BELOW_BYTES): EncodedInferResponse {
  const idBytes = id.length === 0 ? 0 : Buffer.byteLength(id, 'utf8');
  const added = idBytes === 0 ? 0 : lenFieldSize(ID_FIELD, idBytes);
  const messageBytes = message.length + added;
  // A small answer is copied into one buffer: one stream write instead of two to four.
  if (message.length < inlineBelowBytes) return { chunks: [joined(message, id, idBytes, added, messageBytes)], messageBytes };
  const head = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + added);
  writeGrpcMessagePrefix(head, messageBytes);
  if (added === 0) return { chunks: [head, message], messageBytes };
  new ProtobufWriter(head, GRPC_PREFIX_BYTES).string(ID_FIELD, id, idBytes);
  const at = idOffset(message);
  const prefix = head.subarray(0, GRPC_PREFIX_BYTES);
  const idField = head.subarray(GRPC_PREFIX_BYTES);
  if (at === 0) return { chunks: [prefix, idField, message], messageBytes };
  if (at === message.length) return { chunks: [prefix, message, idField], messageBytes };
  return { chunks: [prefix, message.subarray(0, at), idField, message.subarray(at)], messageBytes };
}

function joined(message: Uint8Array, id: string, idBytes: number, added: number, messageBytes: number): Buffer {
  const out = Buffer.allocUnsafe(GRPC_PREFIX_BYTES + messageBytes);
  writeGrpcMessagePrefix(out, messageBytes);
  const at = added === 0 ? message.length : idOffset(message);
  out.set(message.subarray(0, at), GRPC_PREFIX_BYTES);
  if (added > 0) new ProtobufWriter(out, GRPC_PREFIX_BYTES + at).string(ID_FIELD, id, idBytes);
  out.set(message.subarray(at), GRPC_PREFIX_BYTES + at + added);
  return out;
}

/**
 * Where the id field may go in `message`: before its first top-level field numbered above 3, unless a
 * field 3 comes at or after that point (then the end). Anything this scan does not read plainly (a
 * group, an over-long varint) also answers the end, which is always right for a whole message.
 */
function idOffset(message: Uint8Array): number {
  let insertAt = -1;
  let pos = 0;
  while (pos < message.length) {
    const fieldStart = pos;
    const [tag, afterTag] = readVarint(message, pos);
    if (afterTag < 0) return message.length;
    const field = Math.floor(tag / 8);
    if (field === ID_FIELD && insertAt >= 0) return message.length;
    if (field > ID_FIELD && insertAt < 0) insertAt = fieldStart;
    switch (tag % 8) {
      case 0:
        pos = readVarint(message, afterTag)[1];
        break;
      case 1:
        pos = afterTag + 8;
        break;
      case 5:
        pos = afterTag + 4;
        break;
      case 2: {
        const [length, start] = readVarint(message, afterTag);
        pos = start < 0 ? -1 : start + length;
        break;
      }
      default:
        return message.length;
    }
    if (pos < 0 || pos > message.length) return message.length;
  }
  return insertAt < 0 ? message.length : insertAt;
}

/** [value, next position], next -1 when the varint is truncated or longer than 10 bytes. */
function readVarint(bytes: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10 && pos < bytes.length; i++) {
    const byte = bytes[pos++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, pos];
    scale *= 128;
  }
  return [0, -1];
}
