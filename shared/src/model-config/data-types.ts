/**
 * Conversions between the config's DataType enum (`TYPE_FP32`), the KServe v2 protocol's datatype
 * strings (`FP32`) and the generated enum numbers, plus the bigint → number edge for 64-bit fields.
 * The one irregular pair is TYPE_STRING ↔ BYTES (section 1.16 of the protocol reference).
 */
import { TesseraError } from '../errors/index.js';
import { DataType } from '../gen/model_config_pb.js';

/** Config enum names without TYPE_INVALID, e.g. 'TYPE_FP32'. */
export type ConfigDataTypeName = Exclude<keyof typeof DataType, 'TYPE_INVALID'>;

const CONFIG_TO_PROTOCOL: Readonly<Record<ConfigDataTypeName, string>> = {
  TYPE_BOOL: 'BOOL',
  TYPE_UINT8: 'UINT8',
  TYPE_UINT16: 'UINT16',
  TYPE_UINT32: 'UINT32',
  TYPE_UINT64: 'UINT64',
  TYPE_INT8: 'INT8',
  TYPE_INT16: 'INT16',
  TYPE_INT32: 'INT32',
  TYPE_INT64: 'INT64',
  TYPE_FP16: 'FP16',
  TYPE_FP32: 'FP32',
  TYPE_FP64: 'FP64',
  TYPE_STRING: 'BYTES',
  TYPE_BF16: 'BF16',
};

const PROTOCOL_TO_CONFIG: ReadonlyMap<string, ConfigDataTypeName> = new Map(
  Object.entries(CONFIG_TO_PROTOCOL).map(([config, protocol]) => [protocol, config as ConfigDataTypeName]),
);

/** 'TYPE_FP32' (or DataType.TYPE_FP32) → 'FP32'; TYPE_STRING → 'BYTES'. */
export function dataTypeToProtocol(dataType: string | DataType): string {
  const name = typeof dataType === 'number' ? DataType[dataType] : dataType;
  const protocol = name === undefined ? undefined : CONFIG_TO_PROTOCOL[name as ConfigDataTypeName];
  if (protocol === undefined) {
    throw TesseraError.invalidArg(`unknown or invalid model config data type '${String(name ?? dataType)}'`);
  }
  return protocol;
}

/** 'FP32' → 'TYPE_FP32'; 'BYTES' → 'TYPE_STRING'. */
export function protocolToDataType(datatype: string): ConfigDataTypeName {
  const config = PROTOCOL_TO_CONFIG.get(datatype);
  if (config === undefined) throw TesseraError.invalidArg(`unknown protocol datatype '${datatype}'`);
  return config;
}

/** 'TYPE_FP32' → DataType.TYPE_FP32 (the generated enum number). */
export function dataTypeFromName(name: string): DataType {
  const value = (DataType as unknown as Record<string, DataType | undefined>)[name];
  if (value === undefined || typeof value !== 'number' || value === DataType.TYPE_INVALID) {
    throw TesseraError.invalidArg(`unknown model config data type '${name}'`);
  }
  return value;
}

/** DataType.TYPE_FP32 → 'TYPE_FP32'. */
export function dataTypeName(dataType: DataType): string {
  return DataType[dataType] ?? `TYPE_UNKNOWN(${dataType})`;
}

/**
 * 64-bit config fields are bigint in the generated code (see shared/proto/model_config.proto); config
 * values always fit in a double, so code outside the config reader works with plain numbers.
 */
export function dimsOf(tensor: { readonly dims: readonly bigint[] }): number[] {
  return tensor.dims.map(Number);
}

/** number[] → bigint[] for writing dims into a config message. */
export function toBigIntDims(dims: readonly number[]): bigint[] {
  return dims.map((dim) => BigInt(dim));
}
