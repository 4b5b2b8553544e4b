/**
 * `token_stream`: an example decoupled model for Tessera's `typescript` backend with the vLLM-style
 * I/O that Triton's generate extension and OpenAI frontend expect:
 *
 *   inputs   text_input BYTES [1], stream BOOL [1] (optional), sampling_parameters BYTES [1] (optional,
 *            JSON), exclude_input_in_output BOOL [1] (optional)
 *   output   text_output BYTES [-1]
 *
 * It "generates" by streaming the tokens of its prompt back: a token is a run of non-space characters
 * with the spaces before it, so joining the tokens gives the prompt back. Deterministic, no weights.
 *
 * - `stream` true: one response per token, the last one flagged final (no tokens: the bare final flag).
 *   `stream` false or absent: one response with the whole text, flagged final.
 * - `sampling_parameters`: `max_tokens` (a limit on the tokens generated), `stop` (a string or a list:
 *   generation ends before the first token that would make the text contain one; the stop string is not
 *   sent). Other keys (temperature, top_p, seed...) change nothing: the echo is deterministic.
 * - `exclude_input_in_output` false (the default, as vLLM's backend): a non-streamed answer starts with
 *   the prompt itself.
 * - Cancellation: the request's `signal` is checked before each token; once aborted the model stops.
 *   With the config parameter `cancel_log` set to a file path, the model appends one line per request
 *   that saw its signal (`cancelled <tokens sent>`) — tests read it.
 * - Config parameter `token_delay_ms` (default 10): the pause before each token, a stand-in for the
 *   time a real model takes per token.
 *
 * The module contract (decoupled models answer through `request.sender`) is documented in
 * gpu-node/src/backends/typescript/contract.ts.
 */
import { appendFileSync } from 'node:fs';

let tokenDelayMs = 10;
let cancelLog = '';

const decoder = new TextDecoder();

export function initialize(args) {
  const delay = Number(args.parameters.token_delay_ms ?? '10');
  if (!Number.isFinite(delay) || delay < 0) throw new Error(`token_delay_ms must be a number >= 0, got '${args.parameters.token_delay_ms}'`);
  tokenDelayMs = delay;
  cancelLog = args.parameters.cancel_log ?? '';
}

/** Waits `ms`, or less when the signal fires first. */
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

/** Leading spaces plus the next run of non-space characters, so that tokens join back into the text. */
export function splitTokens(text) {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

function firstText(tensor) {
  const element = tensor?.data?.[0];
  return element === undefined ? undefined : decoder.decode(element);
}

function firstBool(tensor) {
  const element = tensor?.data?.[0];
  return element !== undefined && element !== 0;
}

/** Validated sampling parameters; throws with a message the client sees. */
export function samplingParameters(text) {
  if (text === undefined || text === '') return { maxTokens: Infinity, stop: [] };
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('sampling_parameters must be a JSON object');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('sampling_parameters must be a JSON object');
  let maxTokens = Infinity;
  if (parsed.max_tokens !== undefined && parsed.max_tokens !== null) {
    if (!Number.isInteger(parsed.max_tokens) || parsed.max_tokens < 0) throw new Error('max_tokens must be an integer >= 0');
    maxTokens = parsed.max_tokens;
  }
  const stopValue = parsed.stop ?? [];
  const stop = typeof stopValue === 'string' ? [stopValue] : stopValue;
  if (!Array.isArray(stop) || stop.some((s) => typeof s !== 'string')) throw new Error('stop must be a string or a list of strings');
  return { maxTokens, stop: stop.filter((s) => s !== '') };
}

/** The tokens to generate for a prompt: its own tokens, cut at max_tokens and before a stop string. */
export function generatedTokens(prompt, { maxTokens, stop }) {
  const tokens = [];
  let text = '';
  for (const token of splitTokens(prompt)) {
    if (tokens.length >= maxTokens) break;
    if (stop.some((s) => (text + token).includes(s))) break;
    tokens.push(token);
    text += token;
  }
  return tokens;
}

function textOutput(text) {
  return { outputs: { text_output: { datatype: 'BYTES', shape: [1], data: [text] } } };
}

async function generate(request) {
  const { sender, signal } = request;
  const prompt = firstText(request.inputs.text_input);
  if (prompt === undefined) {
    sender.send({ error: 'text_input must hold one string' }, { final: true });
    return;
  }
  let params;
  try {
    params = samplingParameters(firstText(request.inputs.sampling_parameters));
  } catch (error) {
    sender.send({ error: error.message }, { final: true });
    return;
  }
  const stream = firstBool(request.inputs.stream);
  const excludeInput = firstBool(request.inputs.exclude_input_in_output);
  let sent = 0;
  let text = '';
  const tokens = generatedTokens(prompt, params);
  for (const [i, token] of tokens.entries()) {
    await pause(tokenDelayMs, signal);
    if (signal.aborted) break;
    if (stream) sender.send(textOutput(token), { final: i === tokens.length - 1 });
    text += token;
    sent += 1;
  }
  if (signal.aborted) {
    if (cancelLog !== '') appendFileSync(cancelLog, `cancelled ${sent}\n`);
    sender.close();
    return;
  }
  if (stream) sender.close(); // no-op after a final token; completes a request that generated nothing
  else sender.send(textOutput(excludeInput ? text : prompt + text), { final: true });
}

export async function execute(requests) {
  // Requests of one call run side by side; each completes on its own.
  await Promise.all(requests.map(generate));
}
