/**
 * The consistency rule every Tensor must satisfy before anyone trusts its bytes: the data holds exactly
 * what shape and datatype promise. Codecs call it on everything they decode, so the rest of Tessera
 * can slice and view tensor data without re-checking.
 */
import { TesseraError } from '../errors/index.js';
import { countBytesElements } from './bytes-elements.js';
import { isDatatype } from './datatype.js';
import { elementCount, expectedByteSize } from './shape.js';
import type { Tensor } from './tensor.js';

/**
 * Throws INVALID_ARG when the tensor's data does not match its shape and datatype. `what` names the
 * tensor in messages (default "tensor '<name>'"); callers add context such as "input 'x' for model 'm'".
 */
export function validateTensorData(tensor: Tensor, what = `tensor '${tensor.name}'`): void {
  if (!isDatatype(tensor.datatype)) {
    throw TesseraError.invalidArg(`invalid datatype '${String(tensor.datatype)}' for ${what}`);
  }
  if (!(tensor.data instanceof Uint8Array)) {
    throw TesseraError.invalidArg(`data of ${what} is not a byte array`);
  }
  const expected = expectedByteSize(tensor.datatype, tensor.shape, what);
  if (expected !== null) {
    if (tensor.data.length !== expected) {
      throw TesseraError.invalidArg(`byte size mismatch for ${what}: expected ${expected}, got ${tensor.data.length}`);
    }
    return;
  }
  const count = elementCount(tensor.shape, what);
  // Stop counting just past the expected count: extra elements are an error either way.
  const found = countBytesElements(tensor.data, what, count);
  if (found !== count) {
    throw TesseraError.invalidArg(
      `element count mismatch for ${what}: shape needs ${count} BYTES elements, data holds ${found > count ? 'more' : found}`,
    );
  }
}
