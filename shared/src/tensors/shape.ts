/**
 * Shape arithmetic with the checks a network-facing server needs: a shape from a request may hold
 * negative, fractional or astronomically large dimensions, and a product computed without care would
 * overflow into a small number and let a tiny buffer pass for a huge tensor.
 */
import { TesseraError } from '../errors/index.js';
import { datatypeByteSize } from './datatype.js';
import type { Datatype } from './tensor.js';

const MAX_FORMATTED_DIMS = 16;

/** `[2,3]`-style rendering for messages; very long (hostile) shapes are cut so messages stay small. */
export function formatShape(shape: readonly unknown[]): string {
  const shown = shape.slice(0, MAX_FORMATTED_DIMS).map((d) => String(d).slice(0, 24));
  return `[${shown.join(',')}${shape.length > MAX_FORMATTED_DIMS ? `,... (${shape.length} dims)` : ''}]`;
}

/**
 * Number of elements of a fully specified shape ([] is a scalar: 1 element). Every dimension must be a
 * non-negative safe integer and the product must stay a safe integer; otherwise INVALID_ARG naming `what`.
 */
export function elementCount(shape: readonly number[], what = 'tensor'): number {
  let hasZero = false;
  for (const dim of shape) {
    if (typeof dim !== 'number' || !Number.isSafeInteger(dim)) {
      throw TesseraError.invalidArg(`invalid dimension ${String(dim)} in shape ${formatShape(shape)} of ${what}`);
    }
    if (dim < 0) {
      throw TesseraError.invalidArg(
        `all dimensions must be specified (non-negative) for ${what}, got ${formatShape(shape)}`,
      );
    }
    if (dim === 0) hasZero = true;
  }
  // A zero anywhere makes the product 0 even when the other dimensions alone would overflow.
  if (hasZero) return 0;
  let count = 1;
  for (const dim of shape) {
    count *= dim;
    if (count > Number.MAX_SAFE_INTEGER) {
      throw TesseraError.invalidArg(`shape ${formatShape(shape)} of ${what} has too many elements`);
    }
  }
  return count;
}

/** Bytes the raw data of a fixed-size datatype must hold for this shape; null for BYTES. */
export function expectedByteSize(datatype: Datatype, shape: readonly number[], what = 'tensor'): number | null {
  const count = elementCount(shape, what);
  const size = datatypeByteSize(datatype);
  if (size === null) return null;
  const bytes = count * size;
  if (bytes > Number.MAX_SAFE_INTEGER) {
    throw TesseraError.invalidArg(`shape ${formatShape(shape)} of ${what} is too large`);
  }
  return bytes;
}
