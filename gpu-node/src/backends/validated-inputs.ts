/**
 * Input lists that the request validator (models/request-validator.ts) has checked: names, count,
 * datatypes, shapes and byte sizes against the model config. A backend's own safety net (the
 * onnxruntime batch plan) then skips the checks that would only repeat those (issue 16: validate once).
 * The list, not the request, is marked: the scheduler passes requests on as new objects sharing it.
 */
import type { Tensor } from '../../../shared/src/tensors/index.js';

const checked = new WeakSet<readonly Tensor[]>();

export function markValidatedInputs(inputs: readonly Tensor[]): void {
  checked.add(inputs);
}

export function inputsWereValidated(inputs: readonly Tensor[]): boolean {
  return checked.has(inputs);
}
