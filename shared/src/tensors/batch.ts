/**
 * Batching along dimension 0. Because tensor data is raw row-major bytes (BYTES: length-prefixed
 * elements), joining requests is byte concatenation and splitting a batched output is slicing; the
 * only datatype-specific part is finding row boundaries inside BYTES data.
 */
import { TesseraError } from '../errors/index.js';
import { bytesElementOffsets } from './bytes-elements.js';
import { datatypeByteSize } from './datatype.js';
import { elementCount, formatShape } from './shape.js';
import type { Tensor } from './tensor.js';
import { validateTensorData } from './validate.js';

/**
 * Joins tensors of equal datatype and equal non-batch dimensions into one whose dim 0 is the sum.
 * The result takes the first tensor's name; its data is a fresh buffer.
 */
export function concatBatch(tensors: readonly Tensor[]): Tensor {
  const first = tensors[0];
  if (first === undefined) throw TesseraError.invalidArg('cannot concatenate an empty list of tensors');
  const inner = first.shape.slice(1);
  let batch = 0;
  let bytes = 0;
  for (const t of tensors) {
    if (t.shape.length === 0) {
      throw TesseraError.invalidArg(`tensor '${t.name}' has no batch dimension to concatenate along`);
    }
    if (t.datatype !== first.datatype) {
      throw TesseraError.invalidArg(
        `cannot concatenate tensor '${t.name}' of ${t.datatype} with ${first.datatype} tensor '${first.name}'`,
      );
    }
    const tInner = t.shape.slice(1);
    if (tInner.length !== inner.length || tInner.some((d, i) => d !== inner[i])) {
      throw TesseraError.invalidArg(
        `cannot concatenate tensor '${t.name}' of shape ${formatShape(t.shape)} with shape ${formatShape(first.shape)}`,
      );
    }
    validateTensorData(t);
    batch += t.shape[0] as number;
    bytes += t.data.length;
  }
  const data = new Uint8Array(bytes);
  let offset = 0;
  for (const t of tensors) {
    data.set(t.data, offset);
    offset += t.data.length;
  }
  return { name: first.name, datatype: first.datatype, shape: [batch, ...inner], data };
}

/**
 * Cuts a tensor along dim 0 into pieces of the given sizes (which must add up to dim 0). The pieces'
 * data are views into the original buffer, not copies.
 */
export function splitBatch(tensor: Tensor, sizes: readonly number[]): Tensor[] {
  if (tensor.shape.length === 0) {
    throw TesseraError.invalidArg(`tensor '${tensor.name}' has no batch dimension to split`);
  }
  validateTensorData(tensor);
  const batch = tensor.shape[0] as number;
  let total = 0;
  for (const s of sizes) {
    if (!Number.isSafeInteger(s) || s < 0) {
      throw TesseraError.invalidArg(`invalid split size ${s} for tensor '${tensor.name}'`);
    }
    total += s;
  }
  if (total !== batch) {
    throw TesseraError.invalidArg(
      `split sizes [${sizes.join(',')}] add up to ${total}, but tensor '${tensor.name}' has batch ${batch}`,
    );
  }
  const inner = tensor.shape.slice(1);
  const perRow = elementCount(inner);
  const elementSize = datatypeByteSize(tensor.datatype);
  // Byte offset of the start of each row boundary we need; BYTES rows have variable byte lengths.
  const rowStart: (row: number) => number =
    elementSize !== null
      ? (row) => row * perRow * elementSize
      : (() => {
          const offsets = bytesElementOffsets(tensor.data, batch * perRow, `tensor '${tensor.name}'`);
          return (row: number) => offsets[row * perRow] as number;
        })();
  const pieces: Tensor[] = [];
  let row = 0;
  // Pieces of the same size share one shape array (read-only, as a Tensor's shape is): a wave of 64 one-row
  // requests made 64 equal arrays per output.
  let shapeRows = -1;
  let shape: readonly number[] = [];
  for (const s of sizes) {
    if (s !== shapeRows) {
      shapeRows = s;
      shape = [s, ...inner];
    }
    pieces.push({
      name: tensor.name,
      datatype: tensor.datatype,
      shape,
      data: tensor.data.subarray(rowStart(row), rowStart(row + s)),
    });
    row += s;
  }
  return pieces;
}
