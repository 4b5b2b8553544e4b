/**
 * `rag_query`: the first step of the `rag_pipeline` example ensemble, on the typescript backend.
 * It checks the question and hands the query encoder its bytes:
 *
 *   input    text_input BYTES [1]: the question, UTF-8
 *   output   query_bytes UINT8 [-1]: the question's bytes with a space on either side (so words at
 *            the ends form trigrams too, and there are always three bytes to embed)
 *
 * A question that is empty, longer than the config parameter `max_query_bytes` (default 4096), or not
 * valid UTF-8 is the caller's mistake: it fails with INVALID_ARG, saying which.
 * Module contract: gpu-node/src/backends/typescript/contract.ts.
 */

let maxQueryBytes = 4096;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function initialize(args) {
  const limit = Number(args.parameters.max_query_bytes ?? '4096');
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`max_query_bytes must be a positive integer, got '${args.parameters.max_query_bytes}'`);
  maxQueryBytes = limit;
}

/** The question's problem, or undefined when it is usable. Exported for tests. */
export function queryProblem(bytes, limit) {
  if (bytes === undefined) return 'text_input must hold one string';
  if (bytes.length > limit) return `text_input is ${bytes.length} bytes, more than the ${limit} this pipeline accepts (max_query_bytes)`;
  let text;
  try {
    text = utf8.decode(bytes);
  } catch {
    return 'text_input is not valid UTF-8';
  }
  if (text.trim() === '') return 'text_input is empty: ask a question';
  return undefined;
}

/** The encoder's input for a question: a space, its bytes, a space. */
export function encoderInput(bytes) {
  const out = new Uint8Array(bytes.length + 2);
  out[0] = 0x20;
  out.set(bytes, 1);
  out[out.length - 1] = 0x20;
  return out;
}

function prepare(request) {
  const input = request.inputs.text_input;
  const bytes = input?.data.length === 1 ? input.data[0] : undefined;
  const problem = queryProblem(bytes, maxQueryBytes);
  if (problem !== undefined) return { error: `rag_query: ${problem}`, code: 'INVALID_ARG' };
  const data = encoderInput(bytes);
  return { outputs: { query_bytes: { datatype: 'UINT8', shape: [data.length], data } } };
}

export function execute(requests) {
  return requests.map(prepare);
}
