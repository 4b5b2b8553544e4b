/**
 * Conversion between KServe v2 JSON `data` arrays and raw tensor bytes — the only place where tensor
 * values pass through JSON numbers.
 *
 * Decisions worth knowing:
 * - Nested `data` must mirror `shape` exactly (rectangular, one level per dimension). Triton only
 *   counts leaves; we are stricter because a mismatched nesting is always a client bug.
 * - INT64/UINT64: JSON.parse yields doubles, so integers beyond 2^53 arrive rounded. A value that
 *   rounded up to exactly 2^63 (INT64) or 2^64 (UINT64) is taken as the type's maximum, since the
 *   literal may well have been that maximum; anything further out is rejected as out of range.
 * - Output: 64-bit integers come back as numbers when they are safe integers, else as bigint, which
 *   the KServe JSON writer prints as an exact integer literal (as Triton does).
 * - BYTES are bytes, never altered: a JSON input string is encoded as UTF-8, and one that is not
 *   well-formed Unicode (a lone surrogate, which UTF-8 cannot encode) is refused naming the element; a
 *   BYTES output element that is not valid UTF-8 cannot be a JSON string, so it is refused naming the
 *   output and element, telling the client to ask for binary output (Triton writes such bytes raw,
 *   which makes the body invalid JSON). A NUL is a character like any other: `\u0000` in JSON.
 */
import { TesseraError } from '../errors/index.js';
import { decodeBytesElements, encodeBytesElements } from './bytes-elements.js';
import { datatypeByteSize } from './datatype.js';
import { elementCount, formatShape } from './shape.js';
import type { Datatype, Tensor } from './tensor.js';
import { validateTensorData } from './validate.js';

/** Triton's JSON nesting limit for `data`. */
export const MAX_JSON_DATA_NESTING = 100;
/** Default for `maxBytes`: Triton's --http-max-input-size (64 MiB). */
export const DEFAULT_MAX_JSON_INPUT_BYTES = 64 * 1024 * 1024;

export type JsonDataValue = number | boolean | string | bigint;

export interface JsonDataOptions {
  /** Tensor name used in error messages. */
  readonly name?: string;
  /** Role used in error messages: 'input' (default) or 'output'. */
  readonly role?: 'input' | 'output';
  /** Largest byte size the tensor may have (Triton's --http-max-input-size). Default 64 MiB. */
  readonly maxBytes?: number;
  /**
   * Accept NaN and ±Infinity for FP32/FP64 (default false). JSON cannot carry them, so only a client
   * that maps the server's nulls back to NaN needs this.
   */
  readonly allowNonFinite?: boolean;
}

const INT_RANGES: Partial<Record<Datatype, readonly [number, number]>> = {
  UINT8: [0, 0xff],
  UINT16: [0, 0xffff],
  UINT32: [0, 0xffff_ffff],
  INT8: [-0x80, 0x7f],
  INT16: [-0x8000, 0x7fff],
  INT32: [-0x8000_0000, 0x7fff_ffff],
};
const TWO_63 = 2 ** 63;
const TWO_64 = 2 ** 64;
const utf8 = new TextDecoder('utf-8', { fatal: true });
/** A UTF-16 surrogate without its pair: JSON.parse accepts `"\ud800"`, UTF-8 cannot encode it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    // Deeply nested client values can exhaust the stack; the type is enough for the message.
    text = Array.isArray(value) ? 'an array' : typeof value;
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function notInJson(datatype: Datatype, role: string, name: string, direction: 'receiving' | 'sending'): TesseraError {
  return TesseraError.invalidArg(
    `${direction} ${datatype} data via JSON is not supported. Please use the binary data format for ${role} '${name}'`,
  );
}

/** Flattens `data` (flat, or nested exactly like `shape`) into its leaves in row-major order. */
function flatten(data: readonly unknown[], shape: readonly number[], count: number, what: string): unknown[] {
  const nested = data.length > 0 && Array.isArray(data[0]);
  if (!nested) {
    if (data.length !== count) {
      throw TesseraError.invalidArg(
        `unable to parse 'data' of ${what}: shape ${formatShape(shape)} needs ${count} elements, got ${data.length}`,
      );
    }
    return data as unknown[];
  }
  if (shape.length > MAX_JSON_DATA_NESTING) {
    throw TesseraError.invalidArg(`unable to parse 'data' of ${what}: nested deeper than ${MAX_JSON_DATA_NESTING} levels`);
  }
  const leaves: unknown[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (!Array.isArray(node) || depth >= shape.length || node.length !== shape[depth]) {
      throw TesseraError.invalidArg(
        `unable to parse 'data' of ${what}: nested arrays do not match shape ${formatShape(shape)}`,
      );
    }
    if (depth === shape.length - 1) {
      for (const leaf of node) leaves.push(leaf);
      return;
    }
    for (const child of node) walk(child, depth + 1);
  };
  walk(data, 0);
  return leaves;
}

function tooLarge(what: string, bytes: number, max: number): TesseraError {
  return TesseraError.invalidArg(
    `JSON data of ${what} needs ${bytes} bytes, more than the limit of ${max} bytes ` +
      `(--http-max-input-size); send it in the binary data format or raise the limit`,
  );
}

/**
 * KServe JSON `data` → raw tensor bytes. INVALID_ARG for every mismatch: wrong count or nesting, a
 * value of the wrong JSON type, an integer out of range, FP16/BF16 (binary only), or more bytes than
 * `maxBytes`.
 */
export function jsonDataToTensorBytes(
  datatype: Datatype,
  shape: readonly number[],
  data: unknown,
  options: JsonDataOptions = {},
): Uint8Array {
  const name = options.name ?? '';
  const role = options.role ?? 'input';
  const what = options.name === undefined ? role : `${role} '${name}'`;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_JSON_INPUT_BYTES;
  if (datatype === 'FP16' || datatype === 'BF16') throw notInJson(datatype, role, name, 'receiving');
  const count = elementCount(shape, what);
  const size = datatypeByteSize(datatype);
  // Check the size the shape claims before allocating anything for it.
  if (size !== null && count * size > maxBytes) throw tooLarge(what, count * size, maxBytes);
  if (!Array.isArray(data)) {
    throw TesseraError.invalidArg(`unable to parse 'data' of ${what}: expected an array, got ${describe(data)}`);
  }
  const leaves = flatten(data, shape, count, what);
  const range = INT_RANGES[datatype];
  const expected =
    datatype === 'BOOL'
      ? 'true or false'
      : datatype === 'BYTES'
        ? 'a string'
        : range !== undefined
          ? `an integer in [${range[0]}, ${range[1]}]`
          : datatype === 'INT64'
            ? 'a 64-bit signed integer'
            : datatype === 'UINT64'
              ? 'a 64-bit unsigned integer'
              : 'a number';
  const bad = (i: number): TesseraError =>
    TesseraError.invalidArg(
      `unable to parse 'data' of ${what}: element ${i} should be ${expected}, got ${describe(leaves[i])}`,
    );

  if (datatype === 'BYTES') {
    let bytes = 0;
    leaves.forEach((v, i) => {
      if (typeof v !== 'string') throw bad(i);
      if (LONE_SURROGATE.test(v)) {
        throw TesseraError.invalidArg(
          `unable to parse 'data' of ${what}: element ${i} is not well-formed Unicode (a lone surrogate), ` +
            'which has no UTF-8 form; send such bytes as binary data',
        );
      }
      bytes += 4 + v.length; // UTF-16 length is a cheap lower bound of the UTF-8 length
    });
    if (bytes > maxBytes) throw tooLarge(what, bytes, maxBytes);
    const out = encodeBytesElements(leaves as string[]);
    if (out.length > maxBytes) throw tooLarge(what, out.length, maxBytes);
    return out;
  }

  const out = new Uint8Array(count * (size as number));
  const view = new DataView(out.buffer);
  for (let i = 0; i < leaves.length; i++) {
    const v = leaves[i];
    if (datatype === 'BOOL') {
      if (typeof v !== 'boolean') throw bad(i);
      out[i] = v ? 1 : 0;
      continue;
    }
    const isFloat = datatype === 'FP32' || datatype === 'FP64';
    if (typeof v !== 'number' || (!Number.isFinite(v) && !(isFloat && options.allowNonFinite === true))) throw bad(i);
    if (datatype === 'FP32') {
      view.setFloat32(i * 4, v, true);
    } else if (datatype === 'FP64') {
      view.setFloat64(i * 8, v, true);
    } else if (range !== undefined) {
      if (!Number.isInteger(v) || v < range[0] || v > range[1]) throw bad(i);
      const offset = i * (size as number);
      switch (datatype) {
        case 'UINT8':
          view.setUint8(offset, v);
          break;
        case 'INT8':
          view.setInt8(offset, v);
          break;
        case 'UINT16':
          view.setUint16(offset, v, true);
          break;
        case 'INT16':
          view.setInt16(offset, v, true);
          break;
        case 'UINT32':
          view.setUint32(offset, v, true);
          break;
        default:
          view.setInt32(offset, v, true);
      }
    } else if (datatype === 'INT64') {
      if (!Number.isInteger(v) || v < -TWO_63 || v > TWO_63) throw bad(i);
      view.setBigInt64(i * 8, v === TWO_63 ? 2n ** 63n - 1n : BigInt(v), true);
    } else {
      if (!Number.isInteger(v) || v < 0 || v > TWO_64) throw bad(i);
      view.setBigUint64(i * 8, v === TWO_64 ? 2n ** 64n - 1n : BigInt(v), true);
    }
  }
  return out;
}

/**
 * Raw tensor bytes → flat KServe JSON `data` (row-major). FP16/BF16 cannot be rendered as JSON:
 * INVALID_ARG telling the client to request the output in binary.
 */
export function tensorBytesToJsonData(tensor: Tensor, role: 'input' | 'output' = 'output'): JsonDataValue[] {
  const { datatype } = tensor;
  if (datatype === 'FP16' || datatype === 'BF16') throw notInJson(datatype, role, tensor.name, 'sending');
  const what = `${role} '${tensor.name}'`;
  validateTensorData(tensor, what);
  const { data } = tensor;
  if (datatype === 'BYTES') {
    return decodeBytesElements(data, undefined, what).map((e, i) => {
      try {
        return utf8.decode(e);
      } catch {
        throw TesseraError.invalidArg(
          `${what} element ${i} is not valid UTF-8, which a JSON string cannot carry unaltered; ` +
            `request ${what} as binary data ("binary_data": true)`,
        );
      }
    });
  }
  const size = datatypeByteSize(datatype) as number;
  const count = data.length / size;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const out = new Array<JsonDataValue>(count);
  for (let i = 0; i < count; i++) {
    const o = i * size;
    switch (datatype) {
      case 'BOOL':
        out[i] = data[o] !== 0;
        break;
      case 'UINT8':
        out[i] = view.getUint8(o);
        break;
      case 'INT8':
        out[i] = view.getInt8(o);
        break;
      case 'UINT16':
        out[i] = view.getUint16(o, true);
        break;
      case 'INT16':
        out[i] = view.getInt16(o, true);
        break;
      case 'UINT32':
        out[i] = view.getUint32(o, true);
        break;
      case 'INT32':
        out[i] = view.getInt32(o, true);
        break;
      case 'FP32':
        out[i] = view.getFloat32(o, true);
        break;
      case 'FP64':
        out[i] = view.getFloat64(o, true);
        break;
      case 'INT64':
      case 'UINT64': {
        const big = datatype === 'INT64' ? view.getBigInt64(o, true) : view.getBigUint64(o, true);
        const small = Number(big);
        out[i] = Number.isSafeInteger(small) ? small : big;
        break;
      }
    }
  }
  return out;
}
