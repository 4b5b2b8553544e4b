/**
 * `ts_scale`: an example model for Tessera's `typescript` backend. OUTPUT0 = INPUT0 × factor, where
 * factor comes from the model config: `parameters { key: "factor" value: { string_value: "2" } }`.
 *
 * It is plain ESM JavaScript, so the backend can `import()` it from a model repository without a
 * TypeScript loader; the example repository writes it as `<model>/1/model.js`.
 *
 * The module contract this file assumes (the typescript backend implements the other side):
 *
 *   initialize(args) — called once per instance before any execute; may be async; throwing fails the load.
 *     args: {
 *       modelName: string, modelVersion: number, modelDir: string, versionDir: string,
 *       parameters: { [key]: string },   // the config's `parameters`, string_value of each
 *       config?: object,                 // the whole normalized ModelConfig, when the backend passes it
 *     }
 *   execute(requests) — one call per batch; may be async; throwing fails every request of the batch.
 *     requests: Array<{
 *       inputs: { [name]: { datatype: string, shape: number[], data: TypedArray } },  // a Map is accepted too
 *       requestedOutputs?: string[],      // empty or absent: all outputs
 *       parameters?: { [key]: string | number | boolean },
 *     }>
 *     data is a typed array of the KServe datatype (FP32 → Float32Array, INT32 → Int32Array, INT64 →
 *     BigInt64Array, ...; BYTES → an array of Uint8Array); shapes include the batch dimension.
 *     returns Array (same length and order) of
 *       { outputs: { [name]: { datatype, shape, data: TypedArray } } } | { error: string }
 *   finalize() — called once when the instance unloads; may be async.
 *
 * Module state is shared by every instance that imports the same file; this model's only state, the
 * factor, is the same for all of them.
 */

let factor = 1;

/** Reads the factor from flattened parameters, or from a protobuf-es ModelConfig as a fallback. */
function configuredFactor(args) {
  const flat = args?.parameters?.factor;
  const fromConfig = args?.config?.parameters?.factor?.stringValue;
  const text = typeof flat === 'string' ? flat : fromConfig;
  if (text === undefined) return 1;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) {
    throw new Error(`ts_scale: parameter "factor" must be a finite number, got "${text}"`);
  }
  return value;
}

export function initialize(args) {
  factor = configuredFactor(args);
}

function inputOf(inputs, name) {
  return inputs instanceof Map ? inputs.get(name) : inputs?.[name];
}

function scaleOne(request) {
  const input = inputOf(request.inputs, 'INPUT0');
  if (input === undefined) return { error: 'ts_scale: missing input INPUT0' };
  if (input.datatype !== 'FP32' || !(input.data instanceof Float32Array)) {
    return { error: `ts_scale: INPUT0 must be FP32 (a Float32Array), got ${input.datatype}` };
  }
  const out = new Float32Array(input.data.length);
  for (let i = 0; i < out.length; i++) out[i] = input.data[i] * factor;
  return { outputs: { OUTPUT0: { datatype: 'FP32', shape: [...input.shape], data: out } } };
}

export async function execute(requests) {
  return requests.map(scaleOne);
}

export function finalize() {
  factor = 1;
}
