/**
 * KServe datatypes ↔ onnxruntime-node tensor types. onnxruntime-node has no bfloat16 tensors, so BF16
 * cannot cross into a session; 4-bit types cannot come out of one as a Triton datatype.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { datatypeToConfigType, type Datatype } from '../../../../shared/src/tensors/index.js';

/** The element type names onnxruntime-node uses (`Tensor.Type`), kept here as plain strings. */
export type OrtElementType =
  | 'bool'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'float16'
  | 'float32'
  | 'float64'
  | 'string';

const TO_ORT: Record<Exclude<Datatype, 'BF16'>, OrtElementType> = {
  BOOL: 'bool',
  UINT8: 'uint8',
  UINT16: 'uint16',
  UINT32: 'uint32',
  UINT64: 'uint64',
  INT8: 'int8',
  INT16: 'int16',
  INT32: 'int32',
  INT64: 'int64',
  FP16: 'float16',
  FP32: 'float32',
  FP64: 'float64',
  BYTES: 'string',
};

const FROM_ORT = new Map<string, Datatype>(Object.entries(TO_ORT).map(([dt, ort]) => [ort, dt as Datatype]));

export function ortTypeOf(datatype: Datatype, what: string): OrtElementType {
  if (datatype === 'BF16') {
    throw TesseraError.unsupported(`${what} is BF16, which onnxruntime-node cannot pass to a session`);
  }
  return TO_ORT[datatype];
}

/** onnxruntime type → KServe datatype; UNSUPPORTED for types Triton has no datatype for (int4, uint4). */
export function datatypeOfOrt(type: string, what: string): Datatype {
  const datatype = FROM_ORT.get(type);
  if (datatype === undefined) {
    throw TesseraError.unsupported(`${what} has onnxruntime element type '${type}', which Tessera cannot serve`);
  }
  return datatype;
}

/** onnxruntime type → model-config enum name ('float32' → 'TYPE_FP32', 'string' → 'TYPE_STRING'). */
export function configTypeOfOrt(type: string, what: string): string {
  return datatypeToConfigType(datatypeOfOrt(type, what));
}
