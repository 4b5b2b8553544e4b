/**
 * gRPC typed `InferTensorContents` -> our raw little-endian bytes.
 *
 * Each datatype has exactly one field it may use (section 1.16); values are range-checked for the
 * narrow integer types because the wire field is wider than the tensor element (an INT8 travels in
 * `int_contents`, an int32). FP16 and BF16 have no field at all: they can only travel raw.
 */
import { TesseraError } from '../errors/index.js';
import { encodeBytesElements } from '../tensors/bytes-elements.js';
import type { InferTensorContents } from '../gen/grpc_service_pb.js';
import type { Datatype } from '../tensors/index.js';

type ContentsField = Exclude<keyof InferTensorContents, '$typeName' | '$unknown'>;

const FIELD_OF: Record<Exclude<Datatype, 'FP16' | 'BF16'>, ContentsField> = {
  BOOL: 'boolContents',
  UINT8: 'uintContents',
  UINT16: 'uintContents',
  UINT32: 'uintContents',
  UINT64: 'uint64Contents',
  INT8: 'intContents',
  INT16: 'intContents',
  INT32: 'intContents',
  INT64: 'int64Contents',
  FP32: 'fp32Contents',
  FP64: 'fp64Contents',
  BYTES: 'bytesContents',
};

/** Wire (snake_case) names, for messages a client can match against its own code. */
const WIRE_NAME: Record<ContentsField, string> = {
  boolContents: 'bool_contents',
  intContents: 'int_contents',
  int64Contents: 'int64_contents',
  uintContents: 'uint_contents',
  uint64Contents: 'uint64_contents',
  fp32Contents: 'fp32_contents',
  fp64Contents: 'fp64_contents',
  bytesContents: 'bytes_contents',
};

const ALL_FIELDS = Object.keys(WIRE_NAME) as ContentsField[];

const INT_RANGE: Partial<Record<Datatype, readonly [number, number]>> = {
  INT8: [-128, 127],
  INT16: [-32768, 32767],
  INT32: [-2147483648, 2147483647],
  UINT8: [0, 255],
  UINT16: [0, 65535],
  UINT32: [0, 4294967295],
};

function checkRange(values: readonly number[], datatype: Datatype, what: string): void {
  const range = INT_RANGE[datatype];
  if (!range) return;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (v < range[0] || v > range[1]) {
      throw TesseraError.invalidArg(`value ${v} at index ${i} of ${what} is out of range for ${datatype}`);
    }
  }
}

function fixedWidth(count: number, width: number, write: (view: DataView, i: number) => void): Uint8Array {
  const out = new Uint8Array(count * width);
  const view = new DataView(out.buffer);
  for (let i = 0; i < count; i++) write(view, i);
  return out;
}

/**
 * Serializes the datatype's contents field. `elementCount` is what the shape promises; `what` names
 * the tensor in errors ("input 'x'").
 */
export function contentsToRaw(
  contents: InferTensorContents,
  datatype: Datatype,
  elementCount: number,
  what: string,
): Uint8Array {
  if (datatype === 'FP16' || datatype === 'BF16') {
    throw TesseraError.invalidArg(
      `${what} has datatype ${datatype}, which has no typed contents field: send it in raw_input_contents`,
    );
  }
  const field = FIELD_OF[datatype];
  for (const other of ALL_FIELDS) {
    if (other !== field && contents[other].length > 0) {
      throw TesseraError.invalidArg(
        `${what} has datatype ${datatype} but sets ${WIRE_NAME[other]}; expected ${WIRE_NAME[field]}`,
      );
    }
  }
  const values = contents[field];
  if (values.length !== elementCount) {
    throw TesseraError.invalidArg(
      `unexpected number of elements ${values.length} in ${WIRE_NAME[field]} of ${what}, expecting ${elementCount}`,
    );
  }
  switch (datatype) {
    case 'BOOL':
      return Uint8Array.from(contents.boolContents, (b) => (b ? 1 : 0));
    case 'INT8':
      checkRange(contents.intContents, datatype, what);
      return fixedWidth(elementCount, 1, (v, i) => v.setInt8(i, contents.intContents[i] as number));
    case 'INT16':
      checkRange(contents.intContents, datatype, what);
      return fixedWidth(elementCount, 2, (v, i) => v.setInt16(i * 2, contents.intContents[i] as number, true));
    case 'INT32':
      return fixedWidth(elementCount, 4, (v, i) => v.setInt32(i * 4, contents.intContents[i] as number, true));
    case 'UINT8':
      checkRange(contents.uintContents, datatype, what);
      return fixedWidth(elementCount, 1, (v, i) => v.setUint8(i, contents.uintContents[i] as number));
    case 'UINT16':
      checkRange(contents.uintContents, datatype, what);
      return fixedWidth(elementCount, 2, (v, i) => v.setUint16(i * 2, contents.uintContents[i] as number, true));
    case 'UINT32':
      return fixedWidth(elementCount, 4, (v, i) => v.setUint32(i * 4, contents.uintContents[i] as number, true));
    case 'INT64':
      return fixedWidth(elementCount, 8, (v, i) => v.setBigInt64(i * 8, contents.int64Contents[i] as bigint, true));
    case 'UINT64':
      return fixedWidth(elementCount, 8, (v, i) => v.setBigUint64(i * 8, contents.uint64Contents[i] as bigint, true));
    case 'FP32':
      return fixedWidth(elementCount, 4, (v, i) => v.setFloat32(i * 4, contents.fp32Contents[i] as number, true));
    case 'FP64':
      return fixedWidth(elementCount, 8, (v, i) => v.setFloat64(i * 8, contents.fp64Contents[i] as number, true));
    case 'BYTES':
      return encodeBytesElements(contents.bytesContents);
  }
}
