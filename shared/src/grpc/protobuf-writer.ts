/**
 * The protobuf wire format's primitives (varints, tags, length-delimited fields, fixed 64-bit doubles)
 * for hand-written encoders of hot messages: sizes are computed first, then the bytes are written once
 * into a buffer of exactly that size. Reflection-based encoding (protobuf-es `toBinary`) builds the
 * same bytes through generic descriptors at several times the cost.
 */

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;

const TWO_32 = 2 ** 32;

/** Bytes of a non-negative integer below 2^53 as a varint. */
export function varintSize(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  let size = 5;
  for (let rest = Math.floor(value / 0x800000000); rest > 0; rest = Math.floor(rest / 0x80)) size++;
  return size;
}

/** Bytes of an int64/uint64 varint: negatives take 10 (two's complement over 64 bits). */
export function int64Size(value: number | bigint): number {
  if (typeof value === 'number') return value < 0 ? 10 : varintSize(value);
  let rest = BigInt.asUintN(64, value);
  let size = 1;
  while (rest >= 0x80n) {
    rest >>= 7n;
    size++;
  }
  return size;
}

export const tagSize = (field: number): number => varintSize(field << 3);

/** Bytes of a length-delimited field holding `length` bytes (tag, length, payload). */
export const lenFieldSize = (field: number, length: number): number => tagSize(field) + varintSize(length) + length;

/** Writes into a buffer sized beforehand; `pos` is where the next byte goes. */
export class ProtobufWriter {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
  ) {
    this.pos = start;
  }

  varint(value: number): void {
    const buf = this.buf;
    let pos = this.pos;
    // Above 2^32 the bitwise operators would truncate: peel 7 bits at a time arithmetically.
    while (value >= TWO_32) {
      buf[pos++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    while (value > 0x7f) {
      buf[pos++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    buf[pos++] = value;
    this.pos = pos;
  }

  int64(value: number | bigint): void {
    if (typeof value === 'number' && value >= 0) {
      this.varint(value);
      return;
    }
    let rest = BigInt.asUintN(64, BigInt(value));
    while (rest >= 0x80n) {
      this.buf[this.pos++] = Number(rest & 0x7fn) | 0x80;
      rest >>= 7n;
    }
    this.buf[this.pos++] = Number(rest);
  }

  tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  /** A string field's payload; `byteLength` is its UTF-8 length, computed when sizing. */
  string(field: number, value: string, byteLength: number): void {
    this.tag(field, WIRE_LEN);
    this.varint(byteLength);
    this.pos += this.buf.write(value, this.pos, byteLength, 'utf8');
  }

  bytes(field: number, value: Uint8Array): void {
    this.tag(field, WIRE_LEN);
    this.varint(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** The tag and length of a length-delimited field whose payload the caller writes (or sends) next. */
  lenHeader(field: number, length: number): void {
    this.tag(field, WIRE_LEN);
    this.varint(length);
  }

  double(field: number, value: number): void {
    this.tag(field, WIRE_FIXED64);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }
}
