/**
 * The JSON forms of a model config: what `GET .../config` answers (section 1.5 of the protocol
 * reference) and what the load API's `config` parameter accepts.
 */
import { fromJson, ScalarType, toJson } from '@bufbuild/protobuf';
import type { DescEnum, DescField, DescMessage, JsonObject, JsonValue } from '@bufbuild/protobuf';
import { TesseraError } from '../errors/index.js';
import { ModelConfigSchema } from '../gen/model_config_pb.js';
import type { ModelConfig } from '../gen/model_config_pb.js';

const INT64_TYPES = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64]);

/**
 * Triton's `/config` body: snake_case names, primitive fields printed even at their defaults, enums by
 * name, and 64-bit integers as JSON numbers (protobuf JSON would print strings; Triton rewrites them,
 * and every 64-bit field of ModelConfig is on its list). Map keys stay strings.
 */
export function modelConfigToTritonJson(config: ModelConfig): JsonObject {
  const json = toJson(ModelConfigSchema, config, { useProtoFieldName: true, alwaysEmitImplicit: true });
  return int64ToNumbers(ModelConfigSchema, json as JsonObject);
}

function int64ToNumbers(desc: DescMessage, json: JsonObject): JsonObject {
  for (const field of desc.fields) {
    const value = json[field.name];
    if (value === undefined || value === null) continue;
    json[field.name] = convertField(field, value);
  }
  return json;
}

function convertField(field: DescField, value: JsonValue): JsonValue {
  const number = (v: JsonValue) => (typeof v === 'string' ? Number(v) : v);
  const message = (desc: DescMessage, v: JsonValue) => (isObject(v) ? int64ToNumbers(desc, v) : v);
  switch (field.fieldKind) {
    case 'scalar':
      return INT64_TYPES.has(field.scalar) ? number(value) : value;
    case 'message':
      return message(field.message, value);
    case 'list':
      if (!Array.isArray(value)) return value;
      if (field.listKind === 'scalar' && INT64_TYPES.has(field.scalar)) return value.map(number);
      if (field.listKind === 'message') return value.map((item) => message(field.message, item));
      return value;
    case 'map':
      if (!isObject(value)) return value;
      for (const [key, item] of Object.entries(value)) {
        if (field.mapKind === 'message') value[key] = message(field.message, item);
        else if (field.mapKind === 'scalar' && INT64_TYPES.has(field.scalar)) value[key] = number(item);
      }
      return value;
    default:
      return value;
  }
}

/**
 * The load API's `config` parameter: snake_case or camelCase names, enum names in any letter case,
 * 64-bit values as numbers or strings. Unknown fields and wrong types are INVALID_ARG.
 */
export function modelConfigFromJson(jsonText: string): ModelConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(jsonText);
  } catch (error) {
    throw new TesseraError('INVALID_ARG', `failed to parse model configuration JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!isObject(parsed)) throw TesseraError.invalidArg('model configuration JSON must be an object');
  try {
    return fromJson(ModelConfigSchema, canonicalEnums(ModelConfigSchema, parsed));
  } catch (error) {
    throw new TesseraError('INVALID_ARG', `invalid model configuration JSON: ${(error as Error).message}`, { cause: error });
  }
}

/** Rewrites enum names to their declared spelling, matched case-insensitively (as Triton does). */
function canonicalEnums(desc: DescMessage, json: JsonObject): JsonObject {
  for (const field of desc.fields) {
    const key = field.name in json ? field.name : field.jsonName in json ? field.jsonName : undefined;
    if (key === undefined) continue;
    const value = json[key]!;
    json[key] = canonicalField(field, value);
  }
  return json;
}

function canonicalField(field: DescField, value: JsonValue): JsonValue {
  const enumName = (desc: DescEnum, v: JsonValue) =>
    typeof v === 'string' ? (desc.values.find((item) => item.name.toLowerCase() === v.toLowerCase())?.name ?? v) : v;
  const message = (desc: DescMessage, v: JsonValue) => (isObject(v) ? canonicalEnums(desc, v) : v);
  switch (field.fieldKind) {
    case 'enum':
      return enumName(field.enum, value);
    case 'message':
      return message(field.message, value);
    case 'list':
      if (!Array.isArray(value)) return value;
      if (field.listKind === 'enum') return value.map((item) => enumName(field.enum, item));
      if (field.listKind === 'message') return value.map((item) => message(field.message, item));
      return value;
    case 'map':
      if (!isObject(value)) return value;
      for (const [key, item] of Object.entries(value)) {
        if (field.mapKind === 'message') value[key] = message(field.message, item);
        else if (field.mapKind === 'enum') value[key] = enumName(field.enum, item);
      }
      return value;
    default:
      return value;
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
