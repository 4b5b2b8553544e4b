/**
 * `mlp_postprocess`: the last step of the `mlp_pipeline` ensemble, on the typescript backend.
 * Softmax over each batch entry's logits, then its top-k classes (k from the config parameter "k",
 * default 3): PROBS FP32 [batch, k] by descending probability and CLASSES INT32 [batch, k], their
 * indices (ties: the lower index first). Module contract: gpu-node/src/backends/typescript/contract.ts.
 */

let k = 3;

export function initialize(args) {
  const text = args?.parameters?.k;
  if (text !== undefined) {
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`mlp_postprocess: parameter "k" must be a positive integer, got "${text}"`);
    k = value;
  }
}

/** Softmax and top-k of each row of a row-major [rows, width] array. Exported for tests that compute it by hand. */
export function softmaxTopK(logits, rows, count) {
  const width = rows === 0 ? 0 : logits.length / rows;
  const top = Math.min(count, width);
  const probs = new Float32Array(rows * top);
  const classes = new Int32Array(rows * top);
  for (let r = 0; r < rows; r++) {
    const row = logits.subarray(r * width, (r + 1) * width);
    let max = -Infinity;
    for (const x of row) max = Math.max(max, x);
    const exps = Array.from(row, (x) => Math.exp(x - max));
    const sum = exps.reduce((a, b) => a + b, 0);
    const order = exps.map((_, i) => i).sort((a, b) => exps[b] - exps[a] || a - b);
    for (let j = 0; j < top; j++) {
      probs[r * top + j] = exps[order[j]] / sum;
      classes[r * top + j] = order[j];
    }
  }
  return { probs, classes, top };
}

function postprocess(request) {
  const input = request.inputs.INPUT0;
  if (input === undefined || !(input.data instanceof Float32Array)) {
    return { error: 'mlp_postprocess: INPUT0 must be FP32' };
  }
  const batched = input.shape.length > 1;
  const rows = batched ? input.shape[0] : 1;
  const { probs, classes, top } = softmaxTopK(input.data, rows, k);
  const shape = batched ? [rows, top] : [top];
  return {
    outputs: {
      PROBS: { datatype: 'FP32', shape, data: probs },
      CLASSES: { datatype: 'INT32', shape, data: classes },
    },
  };
}

export function execute(requests) {
  return requests.map(postprocess);
}
