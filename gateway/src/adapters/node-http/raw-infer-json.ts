/**
 * The JSON header of an infer request as the raw infer upstream sends it (raw-infer-request.ts), written
 * straight into one string: every input a binary section (its own bytes, not copied), every output
 * asked binary (classification kept), `binary_data_output: true`, and the call's `priority` / `timeout`
 * in place of the client's. Why not inferRequestParts + writeJson: they build the request object again
 * (spreads, maps, Object.entries) and then walk it; on a miss that was ~70 µs of a 150/s request and
 * the largest step of the upstream write in its CPU profile (docs/benchmarks.md, issue 17, 2026-11-27e).
 *
 * The node parses this text: it must mean what `inferRequestParts(withCallParameters(request, opts),
 * { binaryInputs: true, binaryDataOutput: true })` with every output asked binary means (the test
 * compares them parsed, over generated requests).
 */
import { writeJson } from '../../../../shared/src/kserve/index.js';
import { validateTensorData, type InferRequest } from '../../../../shared/src/tensors/index.js';

export interface InferRequestJson {
  readonly json: string;
  /** The inputs' bytes, in order (views of the request, not copies). */
  readonly sections: Uint8Array[];
}

/** The call's own parameters, which replace the client's of the same name (call-parameters.ts). */
export interface CallParameters {
  readonly priority?: number | undefined;
  readonly timeoutUs?: number | undefined;
}

/** Throws INVALID_ARG for an input whose bytes do not match its datatype and shape, as inferRequestParts does. */
export function inferRequestJson(request: InferRequest, call: CallParameters): InferRequestJson {
  const sections: Uint8Array[] = [];
  let text = request.id !== '' ? `{"id":${JSON.stringify(request.id)},"parameters":{` : '{"parameters":{';
  let first = true;
  const parameters = request.parameters;
  for (const key in parameters) {
    if (!Object.hasOwn(parameters, key)) continue;
    // Replaced below; binary_data_output is always true on this path.
    if ((key === 'priority' && call.priority !== undefined) || (key === 'timeout' && call.timeoutUs !== undefined) || key === 'binary_data_output') continue;
    const value = parameters[key];
    if (value === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:${writeJson(value)}`;
    first = false;
  }
  if (call.priority !== undefined) {
    text += `${first ? '' : ','}"priority":${writeJson(call.priority)}`;
    first = false;
  }
  if (call.timeoutUs !== undefined) {
    text += `${first ? '' : ','}"timeout":${writeJson(call.timeoutUs)}`;
    first = false;
  }
  text += `${first ? '' : ','}"binary_data_output":true},"inputs":[`;
  const inputs = request.inputs;
  for (let i = 0; i < inputs.length; i++) {
    const tensor = inputs[i]!;
    validateTensorData(tensor, `input '${tensor.name}'`);
    sections.push(tensor.data);
    text += `${i > 0 ? ',' : ''}{"name":${JSON.stringify(tensor.name)},"shape":${shapeJson(tensor.shape)},"datatype":${JSON.stringify(tensor.datatype)},"parameters":{"binary_data_size":${tensor.data.length}}}`;
  }
  text += ']';
  const outputs = request.outputs;
  if (outputs !== undefined) {
    text += ',"outputs":[';
    for (let i = 0; i < outputs.length; i++) {
      const output = outputs[i]!;
      const classification = output.classification === undefined ? '' : `,"classification":${writeJson(output.classification)}`;
      text += `${i > 0 ? ',' : ''}{"name":${JSON.stringify(output.name)},"parameters":{"binary_data":true${classification}}}`;
    }
    text += ']';
  }
  return { json: `${text}}`, sections };
}

function shapeJson(shape: readonly number[]): string {
  let text = '[';
  for (let i = 0; i < shape.length; i++) text += `${i > 0 ? ',' : ''}${writeJson(shape[i]!)}`;
  return `${text}]`;
}
