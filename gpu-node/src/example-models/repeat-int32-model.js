/**
 * `repeat_int32`: Triton's example decoupled model (its simple_grpc_custom_repeat client), on the typescript
 * backend. For each element i of IN it waits DELAY[i] ms and sends one response {OUT: [IN[i]], IDX: [i]};
 * then it waits WAIT ms and sends the final flag. A cancelled request stops at once.
 */
const MAX_WAIT_MS = 60_000;

function pause(ms, signal) {
  if (ms === 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function milliseconds(value, name) {
  const ms = Number(value);
  if (ms > MAX_WAIT_MS) throw new Error(`${name} may be at most ${MAX_WAIT_MS} ms, got ${ms}`);
  return ms;
}

async function repeat(request) {
  const { sender, signal } = request;
  const values = request.inputs.IN.data;
  const delays = request.inputs.DELAY?.data ?? new Uint32Array(values.length);
  const wait = request.inputs.WAIT?.data?.[0] ?? 0;
  try {
    if (delays.length !== values.length) throw new Error(`DELAY has ${delays.length} elements, IN has ${values.length}: they must match`);
    milliseconds(wait, 'WAIT');
    for (let i = 0; i < delays.length; i += 1) milliseconds(delays[i], `DELAY[${i}]`);
  } catch (error) {
    sender.send({ error: error.message }, { final: true });
    return;
  }
  for (let i = 0; i < values.length && !signal.aborted; i += 1) {
    await pause(Number(delays[i]), signal);
    if (signal.aborted) break;
    sender.send({
      outputs: {
        OUT: { datatype: 'INT32', shape: [1], data: Int32Array.of(values[i]) },
        IDX: { datatype: 'UINT32', shape: [1], data: Uint32Array.of(i) },
      },
    });
  }
  if (!signal.aborted) await pause(Number(wait), signal);
  sender.close();
}

export function initialize() {}

export async function execute(requests) {
  await Promise.all(requests.map(repeat));
}

export function finalize() {}
