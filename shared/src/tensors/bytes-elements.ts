/**
 * The serialized form of BYTES tensors: each element is a 4-byte little-endian uint32 length followed
 * by that many bytes, no terminator, no padding. HTTP binary sections, gRPC raw contents, shared memory
 * and warmup files all use it, so it is the in-memory form of BYTES data in Tessera too.
 */
import { TesseraError } from '../errors/index.js';

const LENGTH_PREFIX = 4;
const MAX_ELEMENT_BYTES = 0xffff_ffff;
const utf8Encoder = new TextEncoder();

/** Serializes elements; strings are encoded as UTF-8. */
export function encodeBytesElements(elements: readonly (Uint8Array | string)[]): Uint8Array {
  const encoded = elements.map((e) => (typeof e === 'string' ? utf8Encoder.encode(e) : e));
  let total = 0;
  for (const e of encoded) {
    if (e.length > MAX_ELEMENT_BYTES) {
      throw TesseraError.invalidArg(`BYTES element of ${e.length} bytes exceeds the 4-byte length prefix`);
    }
    total += LENGTH_PREFIX + e.length;
  }
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const e of encoded) {
    view.setUint32(offset, e.length, true);
    out.set(e, offset + LENGTH_PREFIX);
    offset += LENGTH_PREFIX + e.length;
  }
  return out;
}

/**
 * Splits serialized BYTES data into its elements (views into `data`, not copies). With
 * `expectedCount`, the data must hold exactly that many elements and nothing after them. `what`
 * names the tensor in error messages.
 */
export function decodeBytesElements(data: Uint8Array, expectedCount?: number, what = 'BYTES tensor'): Uint8Array[] {
  const elements: Uint8Array[] = [];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = 0;
  while (offset < data.length) {
    if (expectedCount !== undefined && elements.length === expectedCount) {
      throw TesseraError.invalidArg(
        `${what} has ${data.length - offset} unexpected bytes after its ${expectedCount} BYTES elements`,
      );
    }
    if (data.length - offset < LENGTH_PREFIX) {
      throw TesseraError.invalidArg(
        `${what} is truncated: element ${elements.length} needs a 4-byte length at offset ${offset}, ` +
          `but only ${data.length - offset} bytes remain`,
      );
    }
    const length = view.getUint32(offset, true);
    const start = offset + LENGTH_PREFIX;
    if (length > data.length - start) {
      throw TesseraError.invalidArg(
        `${what} is truncated: element ${elements.length} declares ${length} bytes at offset ${offset}, ` +
          `but only ${data.length - start} remain`,
      );
    }
    elements.push(data.subarray(start, start + length));
    offset = start + length;
  }
  if (expectedCount !== undefined && elements.length !== expectedCount) {
    throw TesseraError.invalidArg(`${what} holds ${elements.length} BYTES elements, expected ${expectedCount}`);
  }
  return elements;
}

/**
 * Counts elements without materializing them (cheaper for validation); throws like decodeBytesElements
 * on malformed data. Stops early and returns `limit + 1` once more than `limit` elements are seen.
 */
export function countBytesElements(data: Uint8Array, what = 'BYTES tensor', limit = Number.MAX_SAFE_INTEGER): number {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let offset = 0;
  let count = 0;
  while (offset < data.length) {
    if (count > limit) return count;
    if (data.length - offset < LENGTH_PREFIX) {
      throw TesseraError.invalidArg(
        `${what} is truncated: element ${count} needs a 4-byte length at offset ${offset}, ` +
          `but only ${data.length - offset} bytes remain`,
      );
    }
    const length = view.getUint32(offset, true);
    if (length > data.length - offset - LENGTH_PREFIX) {
      throw TesseraError.invalidArg(
        `${what} is truncated: element ${count} declares ${length} bytes at offset ${offset}, ` +
          `but only ${data.length - offset - LENGTH_PREFIX} remain`,
      );
    }
    offset += LENGTH_PREFIX + length;
    count++;
  }
  return count;
}

/**
 * Byte offset where each of the first `count` elements starts, plus the end offset (length count+1).
 * Used to split BYTES batches without copying. The data must already be valid.
 */
export function bytesElementOffsets(data: Uint8Array, count: number, what = 'BYTES tensor'): number[] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const offsets = [0];
  let offset = 0;
  for (let i = 0; i < count; i++) {
    if (data.length - offset < LENGTH_PREFIX) {
      throw TesseraError.invalidArg(`${what} is truncated at element ${i}`);
    }
    const length = view.getUint32(offset, true);
    if (length > data.length - offset - LENGTH_PREFIX) {
      throw TesseraError.invalidArg(`${what} is truncated at element ${i}`);
    }
    offset += LENGTH_PREFIX + length;
    offsets.push(offset);
  }
  return offsets;
}
