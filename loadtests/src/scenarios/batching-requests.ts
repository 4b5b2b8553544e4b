/** Request tensors for the batching scenarios: random FP32 rows and counting INT32 rows. */
import type { Tensor } from '../../../shared/src/tensors/index.js';

export function fp32Tensor(name: string, elements: number): Tensor {
  const values = new Float32Array(elements);
  for (let i = 0; i < elements; i++) values[i] = Math.random() * 2 - 1;
  return { name, datatype: 'FP32', shape: [1, elements], data: new Uint8Array(values.buffer) };
}

export function int32Tensor(name: string, elements: number): Tensor {
  const values = Int32Array.from({ length: elements }, (_, i) => i);
  return { name, datatype: 'INT32', shape: [1, elements], data: new Uint8Array(values.buffer) };
}
