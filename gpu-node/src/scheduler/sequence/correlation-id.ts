/**
 * The sequence parameters of a request (Triton's sequence extension): `sequence_id` (the correlation
 * ID: an unsigned integer or a string), `sequence_start` and `sequence_end`. HTTP gives the ID as a
 * number or string; gRPC as int64 (a number, or a bigint beyond 2^53) or string. 0 and "" mean "not
 * in a sequence", which a sequence-batched model refuses.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Parameters } from '../../../../shared/src/tensors/index.js';

/** A numeric ID is kept as an unsigned 64-bit bigint; a string ID as the string. */
export type CorrelationId = bigint | string;

export interface SequenceFlags {
  /** undefined when absent, 0 or "". */
  readonly id: CorrelationId | undefined;
  readonly start: boolean;
  readonly end: boolean;
}

const UINT64_MASK = (1n << 64n) - 1n;

function readId(value: Parameters[string] | undefined): CorrelationId | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'boolean' || (typeof value === 'number' && !Number.isInteger(value))) {
    throw TesseraError.invalidArg(`sequence_id must be an unsigned integer or a string, got ${String(value)}`);
  }
  // gRPC carries the ID as int64; Triton reads it back as uint64, so -1 is 2^64 - 1.
  const id = BigInt(value) & UINT64_MASK;
  return id === 0n ? undefined : id;
}

function readFlag(parameters: Parameters, key: 'sequence_start' | 'sequence_end'): boolean {
  const value = parameters[key];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw TesseraError.invalidArg(`${key} must be a boolean, got ${String(value)}`);
  return value;
}

export function readSequenceFlags(parameters: Parameters): SequenceFlags {
  const own = (key: string) => (Object.hasOwn(parameters, key) ? parameters[key] : undefined);
  return {
    id: readId(own('sequence_id')),
    start: readFlag(parameters, 'sequence_start'),
    end: readFlag(parameters, 'sequence_end'),
  };
}

/** Map key: the numeric ID 5 and the string ID "5" are different sequences, as in Triton. */
export function correlationKey(id: CorrelationId): string {
  return typeof id === 'string' ? `s:${id}` : `u:${id}`;
}

export function formatCorrelationId(id: CorrelationId): string {
  return String(id);
}
