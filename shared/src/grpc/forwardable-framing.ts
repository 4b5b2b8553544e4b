/**
 * Whether a client's protobuf message may be forwarded with fields appended after it
 * (infer-request-encoder.ts's encodeForwardedInferRequestFramed): every top-level field must be
 * whole and end exactly at the message's end, and none may be a group. A message ending in a
 * length that lies (claiming bytes past its end) or in an unterminated group would otherwise swallow
 * the appended fields once the node reads the concatenation, so a client could keep its own
 * `sequence_id` instead of the gateway's tenant-scoped one.
 */
import { TesseraError } from '../errors/index.js';

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;

/** Reads a varint at `pos`; returns [value, next] or throws on a truncated or over-long one. */
function varint(bytes: Uint8Array, pos: number, what: string): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= bytes.length) throw TesseraError.invalidArg(`malformed ${what}: truncated varint`);
    const byte = bytes[pos++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, pos];
    scale *= 128;
  }
  throw TesseraError.invalidArg(`malformed ${what}: varint longer than 10 bytes`);
}

/** Throws INVALID_ARG unless `bytes` is a sequence of whole, non-group fields ending at its end. */
export function checkForwardableFraming(bytes: Uint8Array, what = 'inference.ModelInferRequest'): void {
  let pos = 0;
  while (pos < bytes.length) {
    const [tag, afterTag] = varint(bytes, pos, what);
    const field = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (field === 0) throw TesseraError.invalidArg(`malformed ${what}: field number 0`);
    switch (wireType) {
      case WIRE_VARINT:
        pos = varint(bytes, afterTag, what)[1];
        break;
      case WIRE_FIXED64:
        pos = afterTag + 8;
        break;
      case WIRE_FIXED32:
        pos = afterTag + 4;
        break;
      case WIRE_LEN: {
        const [length, start] = varint(bytes, afterTag, what);
        pos = start + length;
        break;
      }
      default:
        throw TesseraError.invalidArg(`malformed ${what}: field ${field} has wire type ${wireType} (groups are not accepted)`);
    }
    if (pos > bytes.length) throw TesseraError.invalidArg(`malformed ${what}: field ${field} claims ${pos - bytes.length} bytes past the end of the message`);
  }
}
