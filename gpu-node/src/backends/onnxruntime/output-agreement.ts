/**
 * Whether a GPU session's output agrees with the CPU's for the same inputs: floating-point elements
 * within `tolerance` (absolute plus relative to the CPU's value, NaN only against NaN), every other
 * element type exactly. Used by the warmup check of GPU instances.
 */
import { fp16BitsToNumber } from '../../../../shared/src/tensors/index.js';

type Elements = ArrayLike<number | bigint | string | boolean>;

export interface OutputValues {
  /** onnxruntime's element type name ('float32', 'float16', 'int64', 'string', ...). */
  readonly type: string;
  readonly dims: readonly number[];
  readonly data: Elements;
}

function floatReader(type: string): ((data: Elements, i: number) => number) | undefined {
  if (type === 'float32' || type === 'float64') return (data, i) => data[i] as number;
  if (type === 'float16') return (data, i) => fp16BitsToNumber(Number(data[i]));
  return undefined;
}

/** Undefined when they agree; otherwise the first disagreement, worded for a load error. */
export function outputDisagreement(name: string, gpu: OutputValues, cpu: OutputValues, tolerance: number): string | undefined {
  if (gpu.type !== cpu.type) return `output '${name}' has type ${gpu.type} on the GPU but ${cpu.type} on the CPU`;
  if (gpu.dims.join(',') !== cpu.dims.join(',')) {
    return `output '${name}' has shape [${gpu.dims.join(',')}] on the GPU but [${cpu.dims.join(',')}] on the CPU`;
  }
  if (gpu.data.length !== cpu.data.length) return `output '${name}' has ${gpu.data.length} elements on the GPU but ${cpu.data.length} on the CPU`;
  const read = floatReader(cpu.type);
  for (let i = 0; i < cpu.data.length; i++) {
    if (read === undefined) {
      if (gpu.data[i] !== cpu.data[i]) {
        return `output '${name}' element ${i} is ${String(gpu.data[i])} on the GPU but ${String(cpu.data[i])} on the CPU`;
      }
      continue;
    }
    const g = read(gpu.data, i);
    const c = read(cpu.data, i);
    const agree = Number.isNaN(c) ? Number.isNaN(g) : Math.abs(g - c) <= tolerance + tolerance * Math.abs(c);
    if (!agree) {
      return `output '${name}' element ${i} is ${g} on the GPU but ${c} on the CPU (tolerance ${tolerance})`;
    }
  }
  return undefined;
}
