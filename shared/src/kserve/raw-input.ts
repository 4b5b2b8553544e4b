/**
 * Triton's raw binary request: `Inference-Header-Content-Length: 0` and a body that is nothing but the
 * bytes of the model's one input. The codec cannot know that input, so the HTTP layer passes the
 * model's inputs in; the shape is deduced as Triton does (batch 1 when the model batches, at most one
 * variable dimension, BYTES only as a single element).
 */
import { TesseraError } from '../errors/index.js';
import { datatypeByteSize, formatShape, type Datatype, type Tensor } from '../tensors/index.js';

export interface RawInputModel {
  /** The model's max_batch_size; > 0 means the raw body is a batch of 1. */
  readonly maxBatchSize: number;
  /** The model's inputs: config dims without the batch dimension, -1 for a variable dimension. */
  readonly inputs: readonly { readonly name: string; readonly datatype: Datatype; readonly dims: readonly number[] }[];
}

export function decodeRawInput(body: Uint8Array, model: RawInputModel, modelName: string): Tensor {
  const input = model.inputs[0];
  if (input === undefined || model.inputs.length !== 1) {
    throw TesseraError.invalidArg(
      `Raw request must only have 1 input (found 1) to be deduced but got ${model.inputs.length} inputs in ` +
        `'${modelName}' model configuration`,
    );
  }
  const shape = model.maxBatchSize > 0 ? [1, ...input.dims] : [...input.dims];
  const variable = shape.flatMap((d, i) => (d < 0 ? [i] : []));
  if (variable.length > 1) {
    throw TesseraError.invalidArg(
      `The shape of the raw input '${input.name}' can not be deduced because there are more than one variable-sized dimension`,
    );
  }
  const fixedCount = shape.reduce((n, d) => (d < 0 ? n : n * d), 1);
  const size = datatypeByteSize(input.datatype);
  if (size === null) {
    if (variable.length > 0 || fixedCount !== 1) {
      throw TesseraError.invalidArg(
        `For BYTE datatype raw input '${input.name}', the model must have input shape [1], got ${formatShape(shape)}`,
      );
    }
    // The body is the one element's bytes; add the length prefix of the serialized BYTES form.
    const data = new Uint8Array(4 + body.length);
    new DataView(data.buffer).setUint32(0, body.length, true);
    data.set(body, 4);
    return { name: input.name, datatype: input.datatype, shape, data };
  }
  const rowBytes = fixedCount * size;
  const variableAt = variable[0];
  if (variableAt !== undefined) {
    if (rowBytes === 0 ? body.length !== 0 : body.length % rowBytes !== 0) {
      throw TesseraError.invalidArg(
        `unexpected size for raw input '${input.name}' for model '${modelName}': ${body.length} bytes is not ` +
          `a whole number of ${formatShape(shape)} ${input.datatype} elements`,
      );
    }
    shape[variableAt] = rowBytes === 0 ? 0 : body.length / rowBytes;
  } else if (body.length !== rowBytes) {
    throw TesseraError.invalidArg(
      `unexpected size for raw input '${input.name}' for model '${modelName}': expected ${rowBytes} bytes, ` +
        `got ${body.length}`,
    );
  }
  return { name: input.name, datatype: input.datatype, shape, data: body };
}
