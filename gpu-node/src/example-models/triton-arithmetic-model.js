/**
 * `simple_string` and `simple_int8`: Triton's example add/sub models for two datatypes its example clients
 * use (simple_grpc_string_infer_client, grpc_explicit_int8_content_client), on the typescript backend.
 * OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 − INPUT1, element by element; BYTES elements are decimal
 * integers as text. A result the output type cannot carry exactly (an INT8 overflow, a sum past 2^53, an
 * element that is not an integer) fails that request naming the element, rather than wrapping or rounding.
 */
const decoder = new TextDecoder('utf-8', { fatal: true });
const encoder = new TextEncoder();

const INT8_MIN = -128;
const INT8_MAX = 127;

function parseElement(bytes, name, index) {
  let text;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new Error(`${name}[${index}] is not UTF-8 text`);
  }
  if (!/^[+-]?\d{1,15}$/.test(text.trim())) throw new Error(`${name}[${index}] must be a decimal integer of at most 15 digits, got '${text.slice(0, 32)}'`);
  return Number(text.trim());
}

function stringSums(in0, in1) {
  const sum = [];
  const difference = [];
  for (let i = 0; i < in0.length; i += 1) {
    const a = parseElement(in0[i], 'INPUT0', i);
    const b = parseElement(in1[i], 'INPUT1', i);
    sum.push(encoder.encode(String(a + b)));
    difference.push(encoder.encode(String(a - b)));
  }
  return { sum, difference };
}

function int8Sums(in0, in1) {
  const sum = new Int8Array(in0.length);
  const difference = new Int8Array(in0.length);
  for (let i = 0; i < in0.length; i += 1) {
    const s = in0[i] + in1[i];
    const d = in0[i] - in1[i];
    if (s < INT8_MIN || s > INT8_MAX || d < INT8_MIN || d > INT8_MAX) {
      throw new Error(`element ${i}: ${in0[i]} ± ${in1[i]} does not fit INT8`);
    }
    sum[i] = s;
    difference[i] = d;
  }
  return { sum, difference };
}

function addAndSubtract(request) {
  const in0 = request.inputs.INPUT0;
  const in1 = request.inputs.INPUT1;
  if (in0.data.length !== in1.data.length) throw new Error('INPUT0 and INPUT1 must have the same number of elements');
  const { sum, difference } = in0.datatype === 'BYTES' ? stringSums(in0.data, in1.data) : int8Sums(in0.data, in1.data);
  const output = (data) => ({ datatype: in0.datatype, shape: in0.shape, data });
  return { outputs: { OUTPUT0: output(sum), OUTPUT1: output(difference) } };
}

export function initialize() {}

export function execute(requests) {
  return requests.map((request) => {
    try {
      return addAndSubtract(request);
    } catch (error) {
      return { error: error.message };
    }
  });
}

export function finalize() {}
