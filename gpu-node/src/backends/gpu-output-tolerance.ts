/**
 * How far a GPU instance's outputs may stray from the CPU's before its load fails (checked on the
 * warmup samples, warmup.ts): `parameters { key: "gpu_output_tolerance" value: { string_value: "1e-3" } }`,
 * per element |gpu - cpu| <= tol + tol * |cpu|; "off" skips the check.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { ModelConfig } from '../../../shared/src/gen/model_config_pb.js';

export const DEFAULT_GPU_TOLERANCE = 1e-3;

/** The model's tolerance, DEFAULT_GPU_TOLERANCE when unset, undefined for "off"; INVALID_ARG when unreadable. */
export function gpuOutputTolerance(config: ModelConfig): number | undefined {
  const text = config.parameters['gpu_output_tolerance']?.stringValue.trim();
  if (text === undefined || text === '') return DEFAULT_GPU_TOLERANCE;
  if (text.toLowerCase() === 'off') return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) {
    throw TesseraError.invalidArg(`model '${config.name}': parameter 'gpu_output_tolerance' must be a number >= 0 or "off", not '${text}'`);
  }
  return value;
}
