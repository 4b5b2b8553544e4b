/**
 * Moving tensors between threads. Transferring an ArrayBuffer detaches it on the sending side, so only
 * buffers this code made itself (a concatenated batch, an output the worker just produced) are
 * transferred as they are; anything that may belong to someone else (a view into an HTTP body, a
 * cached tensor) is copied exactly once into a fresh buffer first.
 */
import type { Tensor } from '../../../../shared/src/tensors/index.js';
import type { WireTensor } from './protocol.js';

/**
 * An input as a run on the main thread takes it: a wire tensor, or the caller's own tensor lent as it is
 * (a view of an HTTP body or gRPC message: no copy, no new object). A lent tensor never crosses to a
 * thread: `forThread` copies it once first, as `copiedTensorToWire` always did.
 */
export type RunInput = WireTensor | Tensor;

/** True for a wire tensor (a whole ArrayBuffer this code owns), false for a lent view. */
export function isWire(input: RunInput): input is WireTensor {
  return input.data instanceof ArrayBuffer;
}

/** The input as it may cross to a thread: a wire tensor as it is, a lent one copied once. */
export function forThread(input: RunInput): WireTensor {
  return isWire(input) ? input : copiedTensorToWire(input);
}

/** The input's bytes as a Uint8Array: a lent tensor's own view, a wire tensor's buffer wrapped (no copy either way). */
export function runInputTensor(input: RunInput): Tensor {
  return isWire(input) ? wireToTensor(input) : input;
}

/** True when the view spans a whole, non-shared ArrayBuffer, so transferring it moves exactly its bytes. */
function spansWholeBuffer(view: ArrayBufferView): boolean {
  return view.buffer instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === view.buffer.byteLength;
}

/**
 * The view's bytes as a whole ArrayBuffer: the view's own buffer when it spans all of it (no copy), else
 * a copy. Only for buffers the caller owns and is done with: the original is detached once transferred.
 */
export function ownedArrayBuffer(view: ArrayBufferView): ArrayBuffer {
  if (spansWholeBuffer(view)) return view.buffer as ArrayBuffer;
  return copyArrayBuffer(view);
}

/** A fresh ArrayBuffer holding a copy of the view's bytes. */
export function copyArrayBuffer(view: ArrayBufferView): ArrayBuffer {
  const copy = new Uint8Array(view.byteLength);
  copy.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
  return copy.buffer;
}

/** For tensors whose data this code created and will not touch again (e.g. a concatenated batch). */
export function ownedTensorToWire(tensor: Tensor): WireTensor {
  return { name: tensor.name, datatype: tensor.datatype, shape: [...tensor.shape], data: ownedArrayBuffer(tensor.data) };
}

/** For tensors that belong to a caller: one copy into a buffer that can then be transferred. */
export function copiedTensorToWire(tensor: Tensor): WireTensor {
  return { name: tensor.name, datatype: tensor.datatype, shape: [...tensor.shape], data: copyArrayBuffer(tensor.data) };
}

export function wireToTensor(wire: WireTensor): Tensor {
  return { name: wire.name, datatype: wire.datatype, shape: wire.shape, data: new Uint8Array(wire.data) };
}

/** The transfer list for a set of wire tensors (each buffer once: postMessage rejects duplicates). */
export function transferListOf(tensors: Iterable<WireTensor>): ArrayBuffer[] {
  const seen = new Set<ArrayBuffer>();
  for (const t of tensors) if (t.data.byteLength > 0) seen.add(t.data);
  return [...seen];
}
