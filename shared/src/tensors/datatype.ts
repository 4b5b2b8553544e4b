/**
 * Facts about each KServe v2 datatype: its element size, its model-config enum name and the JS typed
 * array that views its raw bytes. Everything else that needs "how big is an FP16" asks here.
 */
import { TesseraError } from '../errors/index.js';
import { DATATYPES, type Datatype } from './tensor.js';

/** The JS typed-array constructor names that can view a datatype's raw bytes. */
export type TypedArrayKind =
  | 'Uint8Array'
  | 'Int8Array'
  | 'Uint16Array'
  | 'Int16Array'
  | 'Uint32Array'
  | 'Int32Array'
  | 'BigUint64Array'
  | 'BigInt64Array'
  | 'Float32Array'
  | 'Float64Array';

interface DatatypeInfo {
  /** Bytes per element; null for BYTES, whose elements are variable-length. */
  readonly byteSize: number | null;
  readonly configType: string;
  /**
   * FP16 and BF16 have no JS typed array (Float16Array is not in Node 20), so they are viewed as their
   * raw 16-bit patterns; see half-float.ts for the conversions.
   */
  readonly typedArray: TypedArrayKind | null;
}

const INFO: Record<Datatype, DatatypeInfo> = {
  BOOL: { byteSize: 1, configType: 'TYPE_BOOL', typedArray: 'Uint8Array' },
  UINT8: { byteSize: 1, configType: 'TYPE_UINT8', typedArray: 'Uint8Array' },
  UINT16: { byteSize: 2, configType: 'TYPE_UINT16', typedArray: 'Uint16Array' },
  UINT32: { byteSize: 4, configType: 'TYPE_UINT32', typedArray: 'Uint32Array' },
  UINT64: { byteSize: 8, configType: 'TYPE_UINT64', typedArray: 'BigUint64Array' },
  INT8: { byteSize: 1, configType: 'TYPE_INT8', typedArray: 'Int8Array' },
  INT16: { byteSize: 2, configType: 'TYPE_INT16', typedArray: 'Int16Array' },
  INT32: { byteSize: 4, configType: 'TYPE_INT32', typedArray: 'Int32Array' },
  INT64: { byteSize: 8, configType: 'TYPE_INT64', typedArray: 'BigInt64Array' },
  FP16: { byteSize: 2, configType: 'TYPE_FP16', typedArray: 'Uint16Array' },
  FP32: { byteSize: 4, configType: 'TYPE_FP32', typedArray: 'Float32Array' },
  FP64: { byteSize: 8, configType: 'TYPE_FP64', typedArray: 'Float64Array' },
  BF16: { byteSize: 2, configType: 'TYPE_BF16', typedArray: 'Uint16Array' },
  // The config enum keeps Triton's historical name for variable-length elements.
  BYTES: { byteSize: null, configType: 'TYPE_STRING', typedArray: null },
};

const BY_CONFIG_TYPE = new Map<string, Datatype>(DATATYPES.map((dt) => [INFO[dt].configType, dt]));
const DATATYPE_SET: ReadonlySet<string> = new Set(DATATYPES);

export function isDatatype(value: unknown): value is Datatype {
  return typeof value === 'string' && DATATYPE_SET.has(value);
}

/** Parses a protocol datatype name; `what` names the tensor in the error (e.g. "input 'x'"). */
export function parseDatatype(value: unknown, what = 'tensor'): Datatype {
  if (isDatatype(value)) return value;
  throw TesseraError.invalidArg(`invalid datatype ${JSON.stringify(value) ?? String(value)} for ${what}`);
}

/** Bytes per element, or null for BYTES. */
export function datatypeByteSize(datatype: Datatype): number | null {
  return INFO[datatype].byteSize;
}

/** Protocol name → model-config enum name ('FP32' → 'TYPE_FP32', 'BYTES' → 'TYPE_STRING'). */
export function datatypeToConfigType(datatype: Datatype): string {
  return INFO[datatype].configType;
}

/** Model-config enum name → protocol name, or null for TYPE_INVALID and unknown names. */
export function configTypeToDatatype(configType: string): Datatype | null {
  return BY_CONFIG_TYPE.get(configType) ?? null;
}

/** The typed array that views this datatype's bytes, or null for BYTES. */
export function typedArrayKindOf(datatype: Datatype): TypedArrayKind | null {
  return INFO[datatype].typedArray;
}
