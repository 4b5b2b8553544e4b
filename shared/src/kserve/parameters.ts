/**
 * Reading the `parameters` objects of a KServe v2 HTTP request: request-level parameters (Triton's
 * reserved keys are type-checked, `triton_*` keys are refused, others pass through to the backend),
 * per-input parameters (how the data is carried) and per-output parameters (binary, classification).
 */
import { TesseraError } from '../errors/index.js';
import type { ParameterValue, Parameters } from '../tensors/index.js';
import { describeJson, isJsonObject, own, type JsonObject } from './json-text.js';

/**
 * Request parameter names Triton reserves: they are interpreted by the server (`binary_data_output` by
 * this codec), and a forwarded HTTP header may not take one of these names (`headers` is reserved only
 * for that purpose; in a request body it passes through like any other key).
 */
export const RESERVED_REQUEST_PARAMETERS = [
  'sequence_id',
  'sequence_start',
  'sequence_end',
  'priority',
  'timeout',
  'headers',
  'binary_data_output',
] as const;

const RESERVED_PREFIX = 'triton_';

function objectOrEmpty(value: unknown, what: string): JsonObject {
  if (value === undefined) return {};
  if (!isJsonObject(value)) {
    throw TesseraError.invalidArg(`'parameters' of ${what} must be a JSON object, got ${describeJson(value)}`);
  }
  return value;
}

function isUint(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

export interface RequestParameters {
  /** Parameters for the core/backend (binary_data_output removed). */
  readonly parameters: Parameters;
  readonly binaryDataOutput: boolean | undefined;
}

/** Request-level `parameters`. */
export function parseRequestParameters(value: unknown): RequestParameters {
  const obj = objectOrEmpty(value, 'the request');
  const entries: [string, ParameterValue][] = [];
  let binaryDataOutput: boolean | undefined;
  for (const key in obj) {
    if (!Object.hasOwn(obj, key)) continue;
    const v = obj[key];
    switch (key) {
      case 'sequence_id':
        if (!isUint(v) && typeof v !== 'string') throw badRequestParameter(key, v, 'an unsigned integer or a string');
        entries.push([key, v]);
        break;
      case 'sequence_start':
      case 'sequence_end':
        if (typeof v !== 'boolean') throw badRequestParameter(key, v, 'a boolean');
        entries.push([key, v]);
        break;
      case 'priority':
      case 'timeout':
        if (!isUint(v)) throw badRequestParameter(key, v, 'an unsigned integer');
        entries.push([key, v]);
        break;
      case 'binary_data_output':
        if (typeof v !== 'boolean') throw badRequestParameter(key, v, 'a boolean');
        binaryDataOutput = v;
        break;
      default:
        if (key.startsWith(RESERVED_PREFIX)) {
          throw TesseraError.invalidArg(
            `parameter '${key}' is not allowed: keys starting with '${RESERVED_PREFIX}' are reserved for the server`,
          );
        }
        if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) {
          entries.push([key, v]);
        } else {
          throw badRequestParameter(key, v, 'a string, a number or a boolean');
        }
    }
  }
  // fromEntries defines own properties, so a key such as "__proto__" stays a plain key.
  return { parameters: entries.length === 0 ? {} : Object.fromEntries(entries), binaryDataOutput };
}

function badRequestParameter(key: string, value: unknown, expected: string): TesseraError {
  return TesseraError.invalidArg(`request parameter '${key}' must be ${expected}, got ${describeJson(value)}`);
}

export type InputDataSource =
  | { readonly kind: 'json' }
  | { readonly kind: 'binary'; readonly byteSize: number }
  | { readonly kind: 'shared_memory' };

/** How an input carries its data: exactly one of `data`, `binary_data_size`, `shared_memory_region`. */
const JSON_SOURCE: InputDataSource = Object.freeze({ kind: 'json' });

/** How an input carries its data: exactly one of `data`, `binary_data_size`, `shared_memory_region`. */
export function parseInputDataSource(input: JsonObject, name: string): InputDataSource {
  const params = own(input, 'parameters');
  if (params !== undefined && !isJsonObject(params)) {
    throw TesseraError.invalidArg(`'parameters' of input '${name}' must be a JSON object, got ${describeJson(params)}`);
  }
  const hasData = own(input, 'data') !== undefined;
  const binarySize = params === undefined ? undefined : own(params, 'binary_data_size');
  const region = params === undefined ? undefined : own(params, 'shared_memory_region');
  const setCount = (hasData ? 1 : 0) + (binarySize !== undefined ? 1 : 0) + (region !== undefined ? 1 : 0);
  if (setCount !== 1) {
    const set = [
      hasData ? "'data'" : null,
      binarySize !== undefined ? "'binary_data_size'" : null,
      region !== undefined ? "'shared_memory_region'" : null,
    ].filter((s) => s !== null);
    throw TesseraError.invalidArg(
      `input '${name}' must set exactly one of 'data', 'binary_data_size' in 'parameters' or ` +
        `'shared_memory_region' in 'parameters', but it sets ${set.length === 0 ? 'none of them' : set.join(' and ')}`,
    );
  }
  if (region !== undefined) throw TesseraError.unsupported('shared memory is not supported');
  if (binarySize !== undefined) {
    if (!isUint(binarySize) || !Number.isSafeInteger(binarySize)) {
      throw TesseraError.invalidArg(
        `'binary_data_size' of input '${name}' must be a non-negative integer, got ${describeJson(binarySize)}`,
      );
    }
    return { kind: 'binary', byteSize: binarySize };
  }
  return JSON_SOURCE;
}

export interface OutputParameters {
  readonly binaryData: boolean | undefined;
  readonly classification: number | undefined;
}

/** Per-output `parameters`: binary_data (bool), classification (positive integer); shared memory → 501. */
export function parseOutputParameters(value: unknown, name: string): OutputParameters {
  const params = objectOrEmpty(value, `output '${name}'`);
  if (own(params, 'shared_memory_region') !== undefined) {
    throw TesseraError.unsupported('shared memory is not supported');
  }
  const binaryData = own(params, 'binary_data');
  if (binaryData !== undefined && typeof binaryData !== 'boolean') {
    throw TesseraError.invalidArg(
      `'binary_data' of output '${name}' must be a boolean, got ${describeJson(binaryData)}`,
    );
  }
  const classification = own(params, 'classification');
  if (
    classification !== undefined &&
    !(isUint(classification) && classification > 0 && Number.isSafeInteger(classification))
  ) {
    throw TesseraError.invalidArg(
      `'classification' of output '${name}' must be a positive integer, got ${describeJson(classification)}`,
    );
  }
  return { binaryData, classification };
}
