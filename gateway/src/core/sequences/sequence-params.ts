/**
 * The sequence parameters of a request as the gateway reads them, with the node's rules
 * (Triton's sequence extension): `sequence_id` is an unsigned integer (uint64; gRPC's int64 -1 is
 * 2^64 - 1) or a string; 0 and "" mean "not in a sequence"; `sequence_start` / `sequence_end` are
 * booleans. A request with no usable id is not a sequence request for routing (the node judges it).
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Parameters } from '../../../../shared/src/tensors/index.js';

export interface SequenceParams {
  /** Canonical id: `u:<decimal>` or `s:<string>` (5 and "5" are different sequences, as in Triton). */
  readonly id: string;
  /** The id as the client wrote it, for messages. */
  readonly display: string;
  readonly start: boolean;
  readonly end: boolean;
}

const UINT64_MASK = (1n << 64n) - 1n;

function readFlag(parameters: Parameters, key: 'sequence_start' | 'sequence_end'): boolean {
  const value = Object.hasOwn(parameters, key) ? parameters[key] : undefined;
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw TesseraError.invalidArg(`${key} must be a boolean, got ${String(value)}`);
  return value;
}

/** The request's sequence, or undefined when it is not in one. Malformed parameters: INVALID_ARG. */
export function readSequenceParams(parameters: Parameters): SequenceParams | undefined {
  const value = Object.hasOwn(parameters, 'sequence_id') ? parameters.sequence_id : undefined;
  if (value === undefined) return undefined;
  let id: string;
  let display: string;
  if (typeof value === 'string') {
    if (value === '') return undefined;
    id = `s:${value}`;
    display = value;
  } else {
    if (typeof value === 'boolean' || (typeof value === 'number' && !Number.isInteger(value))) {
      throw TesseraError.invalidArg(`sequence_id must be an unsigned integer or a string, got ${String(value)}`);
    }
    const numeric = BigInt(value) & UINT64_MASK;
    if (numeric === 0n) return undefined;
    id = `u:${numeric}`;
    display = String(numeric);
  }
  return { id, display, start: readFlag(parameters, 'sequence_start'), end: readFlag(parameters, 'sequence_end') };
}
