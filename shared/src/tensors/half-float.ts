/**
 * FP16 (IEEE binary16) and BF16 (bfloat16) ↔ JS number. Node 20 has no Float16Array, and onnxruntime
 * hands FP16/BF16 tensors over as raw 16-bit patterns, so tests and the classification extension
 * (which must rank output values) convert here. Encoding rounds to nearest, ties to even, directly from
 * the double (no detour through float32, which would round twice).
 */

interface MiniFloat {
  readonly expBits: number;
  readonly mantBits: number;
}

const FP16: MiniFloat = { expBits: 5, mantBits: 10 };
const BF16: MiniFloat = { expBits: 8, mantBits: 7 };

function roundHalfEven(v: number): number {
  const floor = Math.floor(v);
  const diff = v - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

function encode(value: number, f: MiniFloat): number {
  const bias = 2 ** (f.expBits - 1) - 1;
  const infBits = (2 ** f.expBits - 1) << f.mantBits;
  const mantScale = 2 ** f.mantBits;
  if (Number.isNaN(value)) return infBits | (1 << (f.mantBits - 1));
  const sign = value < 0 || Object.is(value, -0) ? 1 << (f.expBits + f.mantBits) : 0;
  const a = Math.abs(value);
  if (a === Infinity) return sign | infBits;
  const minExp = 1 - bias;
  if (a < 2 ** minExp) {
    // Subnormal range; a rounded result of mantScale is exactly the smallest normal's encoding.
    return sign | roundHalfEven(a / 2 ** (minExp - f.mantBits));
  }
  let e = Math.floor(Math.log2(a));
  // log2 may be off by one near powers of two; fix it exactly.
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  let m = roundHalfEven((a / 2 ** e - 1) * mantScale);
  if (m === mantScale) {
    e++;
    m = 0;
  }
  if (e > bias) return sign | infBits;
  return sign | ((e + bias) << f.mantBits) | m;
}

function decode(bits: number, f: MiniFloat): number {
  const bias = 2 ** (f.expBits - 1) - 1;
  const mantMask = 2 ** f.mantBits - 1;
  const expMax = 2 ** f.expBits - 1;
  const sign = (bits >> (f.expBits + f.mantBits)) & 1 ? -1 : 1;
  const exp = (bits >> f.mantBits) & expMax;
  const mant = bits & mantMask;
  if (exp === 0) return sign * mant * 2 ** (1 - bias - f.mantBits);
  if (exp === expMax) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1 + mant / 2 ** f.mantBits) * 2 ** (exp - bias);
}

export function fp16BitsToNumber(bits: number): number {
  return decode(bits & 0xffff, FP16);
}

export function numberToFp16Bits(value: number): number {
  return encode(value, FP16);
}

export function bf16BitsToNumber(bits: number): number {
  return decode(bits & 0xffff, BF16);
}

export function numberToBf16Bits(value: number): number {
  return encode(value, BF16);
}

function bytesToNumbers(data: Uint8Array, f: MiniFloat): number[] {
  const count = Math.floor(data.length / 2);
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) out[i] = decode((data[2 * i] as number) | ((data[2 * i + 1] as number) << 8), f);
  return out;
}

function numbersToBytes(values: readonly number[], f: MiniFloat): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  values.forEach((v, i) => {
    const bits = encode(v, f);
    out[2 * i] = bits & 0xff;
    out[2 * i + 1] = bits >> 8;
  });
  return out;
}

/** Raw little-endian FP16 bytes → numbers (a trailing odd byte is ignored). */
export function fp16BytesToNumbers(data: Uint8Array): number[] {
  return bytesToNumbers(data, FP16);
}

export function numbersToFp16Bytes(values: readonly number[]): Uint8Array {
  return numbersToBytes(values, FP16);
}

/** Raw little-endian BF16 bytes → numbers (a trailing odd byte is ignored). */
export function bf16BytesToNumbers(data: Uint8Array): number[] {
  return bytesToNumbers(data, BF16);
}

export function numbersToBf16Bytes(values: readonly number[]): Uint8Array {
  return numbersToBytes(values, BF16);
}
