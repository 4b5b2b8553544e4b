/**
 * Conversions between wire tensors and what a model module sees and returns (contract.ts). Output
 * checks are strict because a model's mistakes must not reach clients as garbage: an unknown datatype,
 * a bad shape or a size mismatch becomes INTERNAL naming the model and the output.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import {
  decodeBytesElements,
  elementCount,
  encodeBytesElements,
  formatShape,
  isDatatype,
  numberToBf16Bits,
  numberToFp16Bits,
  tensorToTypedArray,
  TYPED_ARRAY_CONSTRUCTORS,
  typedArrayKindOf,
  type Datatype,
} from '../../../../shared/src/tensors/index.js';
import type { WireTensor } from '../worker/protocol.js';
import { copyArrayBuffer, wireToTensor } from '../worker/wire-tensor.js';
import type { ModelInputTensor, ModelOutputTensor } from './contract.js';

/** Views the transferred buffer (owned by this thread now), so inputs are not copied again. */
export function inputForModel(wire: WireTensor): ModelInputTensor {
  const tensor = wireToTensor(wire);
  const data =
    wire.datatype === 'BYTES'
      ? decodeBytesElements(tensor.data, elementCount(tensor.shape), `input '${wire.name}'`)
      : tensorToTypedArray(tensor);
  return { datatype: wire.datatype, shape: wire.shape, data };
}

function fail(model: string, name: string, problem: string): TesseraError {
  return TesseraError.internal(`model '${model}': output '${name}' ${problem}`);
}

function checkShape(model: string, name: string, shape: unknown): number[] {
  if (!Array.isArray(shape) || shape.some((d) => typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0)) {
    throw fail(model, name, `has an invalid shape ${JSON.stringify(shape)}: dimensions must be non-negative integers`);
  }
  return shape as number[];
}

function bytesData(model: string, name: string, data: unknown, count: number): ArrayBuffer {
  if (!Array.isArray(data) || data.some((e) => typeof e !== 'string' && !(e instanceof Uint8Array))) {
    throw fail(model, name, 'is BYTES, so its data must be an array of strings or Uint8Arrays');
  }
  if (data.length !== count) throw fail(model, name, `has ${data.length} elements, but its shape needs ${count}`);
  return encodeBytesElements(data as (string | Uint8Array)[]).buffer as ArrayBuffer;
}

function fromPlainArray(datatype: Datatype, values: readonly unknown[]): ArrayBufferView {
  switch (datatype) {
    case 'FP16':
      return Uint16Array.from(values, (v) => numberToFp16Bits(Number(v)));
    case 'BF16':
      return Uint16Array.from(values, (v) => numberToBf16Bits(Number(v)));
    case 'BOOL':
      return Uint8Array.from(values, (v) => (v ? 1 : 0));
    case 'INT64':
      return BigInt64Array.from(values, (v) => BigInt(v as number | bigint));
    case 'UINT64':
      return BigUint64Array.from(values, (v) => BigInt(v as number | bigint));
    default: {
      const kind = typedArrayKindOf(datatype) ?? 'Uint8Array';
      const ctor = TYPED_ARRAY_CONSTRUCTORS[kind] as unknown as {
        from(v: readonly unknown[], f: (x: unknown) => number): ArrayBufferView;
      };
      return ctor.from(values, Number);
    }
  }
}

/** Checks one returned output and copies its bytes into a buffer that can be transferred. */
export function outputFromModel(model: string, name: string, output: ModelOutputTensor): WireTensor {
  if (output === null || typeof output !== 'object') throw fail(model, name, 'is not an object');
  const { datatype } = output;
  if (!isDatatype(datatype)) throw fail(model, name, `has unknown datatype ${JSON.stringify(datatype)}`);
  const shape = checkShape(model, name, output.shape);
  const count = elementCount(shape, `output '${name}'`);
  if (datatype === 'BYTES') return { name, datatype, shape, data: bytesData(model, name, output.data, count) };

  const kind = typedArrayKindOf(datatype) as keyof typeof TYPED_ARRAY_CONSTRUCTORS;
  let view: ArrayBufferView;
  if (Array.isArray(output.data)) {
    try {
      view = fromPlainArray(datatype, output.data);
    } catch (error) {
      throw fail(model, name, `has data that cannot be ${datatype}: ${error instanceof Error ? error.message : String(error)}`);
    }
  } else if (output.data instanceof TYPED_ARRAY_CONSTRUCTORS[kind]) {
    view = output.data;
  } else {
    const got = ArrayBuffer.isView(output.data) ? output.data.constructor.name : typeof output.data;
    throw fail(model, name, `is ${datatype}, so its data must be a ${kind} or an array, got ${got}`);
  }
  const elements = view.byteLength / TYPED_ARRAY_CONSTRUCTORS[kind].BYTES_PER_ELEMENT;
  if (elements !== count) {
    throw fail(model, name, `has ${elements} elements, but shape ${formatShape(shape)} needs ${count}`);
  }
  // Always a copy: the array may be the model's own state, and transferring would detach it.
  return { name, datatype, shape, data: Array.isArray(output.data) ? (view.buffer as ArrayBuffer) : copyArrayBuffer(view) };
}
