/**
 * `mlp_preprocess`: the first step of the `mlp_pipeline` ensemble, on the typescript backend.
 * OUTPUT0 = INPUT0 standardized per batch entry: (x - mean) / sqrt(variance + 1e-5), so `mlp_small`
 * sees inputs of the same scale whatever the client sends. FP32 [batch, n] → FP32 [batch, n].
 * Module contract: gpu-node/src/backends/typescript/contract.ts.
 */

const EPSILON = 1e-5;

/** Standardizes each row of a row-major [rows, width] array. Exported for tests that compute it by hand. */
export function standardize(data, rows) {
  const width = rows === 0 ? 0 : data.length / rows;
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) {
    const row = data.subarray(r * width, (r + 1) * width);
    let mean = 0;
    for (const x of row) mean += x;
    mean /= width;
    let variance = 0;
    for (const x of row) variance += (x - mean) * (x - mean);
    variance /= width;
    const scale = 1 / Math.sqrt(variance + EPSILON);
    for (let i = 0; i < width; i++) out[r * width + i] = (row[i] - mean) * scale;
  }
  return out;
}

function preprocess(request) {
  const input = request.inputs.INPUT0;
  if (input === undefined || !(input.data instanceof Float32Array)) {
    return { error: 'mlp_preprocess: INPUT0 must be FP32' };
  }
  const rows = input.shape.length > 1 ? input.shape[0] : 1;
  return { outputs: { OUTPUT0: { datatype: 'FP32', shape: [...input.shape], data: standardize(input.data, rows) } } };
}

export function execute(requests) {
  return requests.map(preprocess);
}
