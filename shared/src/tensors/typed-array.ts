/**
 * Views between raw tensor bytes and JS typed arrays. A typed array needs its byte offset aligned to
 * its element size; tensor data sliced out of an HTTP body rarely is, so unaligned data is copied and
 * aligned data is viewed in place. Both directions assume a little-endian host, which every platform
 * Node ships for is; a big-endian host gets UNSUPPORTED rather than silently swapped numbers.
 */
import { TesseraError } from '../errors/index.js';
import { bf16BytesToNumbers, fp16BytesToNumbers } from './half-float.js';
import { typedArrayKindOf } from './datatype.js';
import type { Tensor } from './tensor.js';
import { validateTensorData } from './validate.js';

export type AnyTypedArray =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | BigUint64Array
  | BigInt64Array
  | Float32Array
  | Float64Array;

const HOST_IS_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The constructor of each typed-array kind (datatype.ts's typedArrayKindOf names the kind). */
export const TYPED_ARRAY_CONSTRUCTORS = {
  Uint8Array,
  Int8Array,
  Uint16Array,
  Int16Array,
  Uint32Array,
  Int32Array,
  BigUint64Array,
  BigInt64Array,
  Float32Array,
  Float64Array,
} as const;

function requireLittleEndianHost(): void {
  if (!HOST_IS_LITTLE_ENDIAN) {
    throw TesseraError.unsupported('typed-array views of tensor data need a little-endian host');
  }
}

/**
 * The tensor's data as the typed array of its datatype (FP16/BF16: Uint16Array of raw bit patterns;
 * BOOL: Uint8Array of 0/1). Shares memory with `tensor.data` when aligned, else copies. BYTES tensors
 * have no typed array: INVALID_ARG (use decodeBytesElements).
 */
export function tensorToTypedArray(tensor: Tensor): AnyTypedArray {
  const kind = typedArrayKindOf(tensor.datatype);
  if (kind === null) {
    throw TesseraError.invalidArg(`BYTES tensor '${tensor.name}' has no typed-array view`);
  }
  validateTensorData(tensor);
  requireLittleEndianHost();
  const ctor = TYPED_ARRAY_CONSTRUCTORS[kind];
  const { data } = tensor;
  const length = data.byteLength / ctor.BYTES_PER_ELEMENT;
  if (data.byteOffset % ctor.BYTES_PER_ELEMENT === 0) {
    return new ctor(data.buffer as ArrayBuffer, data.byteOffset, length);
  }
  const copy = new Uint8Array(data.byteLength);
  copy.set(data);
  return new ctor(copy.buffer, 0, length);
}

/** The raw bytes behind a typed array (a view, not a copy), ready to be a Tensor's `data`. */
export function typedArrayToBytes(array: AnyTypedArray): Uint8Array {
  requireLittleEndianHost();
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

/**
 * Every element as a JS number, for code that must compare values of any numeric datatype
 * (classification). INT64/UINT64 beyond 2^53 lose precision; BOOL gives 0/1; BYTES is INVALID_ARG.
 */
export function tensorToNumbers(tensor: Tensor): number[] {
  if (tensor.datatype === 'FP16' || tensor.datatype === 'BF16') {
    validateTensorData(tensor);
    return tensor.datatype === 'FP16' ? fp16BytesToNumbers(tensor.data) : bf16BytesToNumbers(tensor.data);
  }
  const array = tensorToTypedArray(tensor);
  const out = new Array<number>(array.length);
  for (let i = 0; i < array.length; i++) out[i] = Number(array[i]);
  if (tensor.datatype === 'BOOL') return out.map((v) => (v === 0 ? 0 : 1));
  return out;
}
