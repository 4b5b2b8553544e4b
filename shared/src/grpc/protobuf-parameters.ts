/**
 * InferParameter maps (`map<string, InferParameter>`) for the hand-written ModelInfer encoders: sized
 * first, then written, with the oneof field parameter-codec.ts's parametersToProto would choose.
 */
import { TesseraError } from '../errors/index.js';
import type { ParameterValue, Parameters } from '../tensors/index.js';
import type { ProtobufWriter} from './protobuf-writer.js';
import { WIRE_VARINT, int64Size, lenFieldSize, tagSize } from './protobuf-writer.js';

const MAP_ENTRY = { key: 1, value: 2 } as const;
const PARAM = { bool: 1, int64: 2, string: 3, double: 4, uint64: 5 } as const;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

const utf8Length = (text: string): number => (text.length === 0 ? 0 : Buffer.byteLength(text, 'utf8'));

/** One parameter as InferParameter would hold it: its oneof field and its value (parameter-codec.ts's rules). */
interface ParamChoice {
  readonly field: number;
  readonly value: ParameterValue;
  /** Payload size: the string's UTF-8 length, the varint's bytes, or 8 for a double. */
  readonly size: number;
}

function paramChoice(key: string, value: ParameterValue): ParamChoice {
  switch (typeof value) {
    case 'boolean':
      return { field: PARAM.bool, value, size: 1 };
    case 'string':
      return { field: PARAM.string, value, size: utf8Length(value) };
    case 'number':
      return Number.isSafeInteger(value) ? { field: PARAM.int64, value, size: int64Size(value) } : { field: PARAM.double, value, size: 8 };
    case 'bigint':
      if (value >= INT64_MIN && value <= INT64_MAX) return { field: PARAM.int64, value, size: int64Size(value) };
      if (value > INT64_MAX && value <= UINT64_MAX) return { field: PARAM.uint64, value, size: int64Size(value) };
      throw TesseraError.invalidArg(`parameter '${key}' value ${value} does not fit in 64 bits`);
  }
}

/** The InferParameter message's size for a choice. */
const paramMessageSize = (choice: ParamChoice): number =>
  choice.field === PARAM.string ? lenFieldSize(choice.field, choice.size) : tagSize(choice.field) + choice.size;

export interface SizedEntry {
  readonly key: string;
  readonly keyBytes: number;
  readonly choice: ParamChoice;
  /** The map entry message's size. */
  readonly size: number;
}

export function sizeParameters(params: Parameters | undefined): SizedEntry[] {
  const entries: SizedEntry[] = [];
  if (params === undefined) return entries;
  for (const key of Object.keys(params)) {
    const choice = paramChoice(key, params[key] as ParameterValue);
    const keyBytes = utf8Length(key);
    entries.push({ key, keyBytes, choice, size: lenFieldSize(MAP_ENTRY.key, keyBytes) + lenFieldSize(MAP_ENTRY.value, paramMessageSize(choice)) });
  }
  return entries;
}

export const mapSize = (field: number, entries: readonly SizedEntry[]): number => {
  let size = 0;
  for (const entry of entries) size += lenFieldSize(field, entry.size);
  return size;
};

export function writeParameters(w: ProtobufWriter, field: number, entries: readonly SizedEntry[]): void {
  for (const { key, keyBytes, choice, size } of entries) {
    w.lenHeader(field, size);
    w.string(MAP_ENTRY.key, key, keyBytes);
    w.lenHeader(MAP_ENTRY.value, paramMessageSize(choice));
    switch (choice.field) {
      case PARAM.bool:
        w.tag(PARAM.bool, WIRE_VARINT);
        w.varint(choice.value ? 1 : 0);
        break;
      case PARAM.string:
        w.string(PARAM.string, choice.value as string, choice.size);
        break;
      case PARAM.double:
        w.double(PARAM.double, choice.value as number);
        break;
      default:
        w.tag(choice.field, WIRE_VARINT);
        w.int64(choice.value as number | bigint);
    }
  }
}

