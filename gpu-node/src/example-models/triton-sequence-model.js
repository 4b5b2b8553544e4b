/**
 * Triton's example sequence models, as its sequence example clients (simple_*_sequence_*_infer_client) expect
 * them, on the typescript backend. Parameter `variant`:
 *   plain        (simple_sequence):             OUTPUT = INPUT, plus 1 on the sequence's first request;
 *   dyna         (simple_dyna_sequence):        the same, plus the correlation ID on its last request;
 *   string_dyna  (simple_string_dyna_sequence): OUTPUT = running sum of INPUT within the sequence, plus the
 *                correlation ID (a string of digits) on its last request.
 * Controls arrive as the inputs the config names: START, READY and, for dyna variants, END and CORRID.
 * A row whose READY is 0 is padding for an empty slot and is answered with 0.
 */
const decoder = new TextDecoder();
let variant = 'plain';
/** Running sums of `string_dyna` sequences, by correlation ID; a sequence's entry goes at its end. */
const runningSums = new Map();

export function initialize(args) {
  variant = args.parameters.variant ?? 'plain';
  if (!['plain', 'dyna', 'string_dyna'].includes(variant)) throw new Error(`variant must be plain, dyna or string_dyna, got '${variant}'`);
}

function flag(tensor, row) {
  return tensor !== undefined && Number(tensor.data[row]) !== 0;
}

function correlationId(tensor, row) {
  if (tensor === undefined) return undefined;
  if (tensor.datatype !== 'BYTES') return BigInt(tensor.data[row]);
  return decoder.decode(tensor.data[row]);
}

/** The ID as the INT32 to add: its low 32 bits; a string ID must be decimal digits, as the example client sends. */
function idValue(id) {
  if (typeof id === 'bigint') return Number(BigInt.asIntN(32, id));
  if (!/^\d{1,20}$/.test(id)) throw new Error(`correlation ID '${id.slice(0, 40)}' must be a decimal integer for this model`);
  return Number(BigInt.asIntN(32, BigInt(id)));
}

function oneRow(request, row) {
  const { INPUT, START, END, READY, CORRID } = request.inputs;
  if (READY !== undefined && !flag(READY, row)) return 0;
  const value = INPUT.data[row];
  const start = flag(START, row);
  const end = flag(END, row);
  const id = correlationId(CORRID, row);
  if (variant === 'string_dyna') {
    const key = String(id);
    const sum = (start ? 0 : (runningSums.get(key) ?? 0)) + value;
    if (end) runningSums.delete(key);
    else runningSums.set(key, sum);
    return end ? sum + idValue(id) : sum;
  }
  const base = start ? value + 1 : value;
  return variant === 'dyna' && end ? base + idValue(id) : base;
}

export function execute(requests) {
  return requests.map((request) => {
    try {
      const input = request.inputs.INPUT;
      const output = new Int32Array(input.data.length);
      for (let row = 0; row < output.length; row += 1) output[row] = oneRow(request, row);
      return { outputs: { OUTPUT: { datatype: 'INT32', shape: input.shape, data: output } } };
    } catch (error) {
      return { error: error.message };
    }
  });
}

export function finalize() {
  runningSums.clear();
}
