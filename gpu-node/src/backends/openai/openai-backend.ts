/**
 * The `openai` backend: a model whose engine runs elsewhere, behind an OpenAI-compatible API (vLLM,
 * llama.cpp's server, TGI, another Tessera node). The model declares the vLLM-style I/O (input
 * `text_input` BYTES, optional `stream` BOOL, `sampling_parameters` BYTES (JSON), `exclude_input_in_output`
 * BOOL; output `text_output` BYTES), so the node's generate extension and OpenAI API serve it like a local
 * model. Config parameters:
 * - `base_url` (required): the engine's OpenAI base, e.g. `http://10.0.0.5:8000/v1` (http or https only);
 * - `upstream_model`: the model name the engine knows; default this model's name;
 * - `api_key_env`: the name of an environment variable holding the engine's key (sent as Bearer), so the
 *   key never sits in config.pbtxt;
 * - `request_timeout_ms`: most time for the engine to start answering; default 60 000.
 *
 * Each request is one `POST <base_url>/completions` with the prompt and the sampling parameters
 * (max_tokens, temperature, top_p, stop, seed). A decoupled model with `stream` true asks the engine to
 * stream and sends each text piece as a response; otherwise one response with the whole text (the prompt
 * first unless `exclude_input_in_output`, as vLLM's backend does). When the client goes away the
 * request's signal aborts the upstream request, which closes its connection. Upstream failures fail the
 * request with UNAVAILABLE naming the engine's status and message; nothing of the key is ever echoed.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { decodeBytesElements, encodeBytesElements, type Tensor } from '../../../../shared/src/tensors/index.js';
import type { Backend, BackendInstance, ExecutionBatchResult, ExecutionRequest, ExecutionResult, InstanceSpec, ModelSource } from '../backend.js';

export const OPENAI_BACKEND = 'openai';
const DEFAULT_TIMEOUT_MS = 60_000;
/** Most bytes of an upstream answer (a whole completion, or one SSE line). */
const MAX_UPSTREAM_BYTES = 16 * 1024 * 1024;

interface Upstream {
  readonly url: string;
  readonly model: string;
  readonly apiKey: string | undefined;
  readonly timeoutMs: number;
  readonly decoupled: boolean;
  readonly batching: boolean;
}

const decoder = new TextDecoder();

function parameter(source: ModelSource, key: string): string | undefined {
  const value = source.config.parameters[key]?.stringValue;
  return value === undefined || value === '' ? undefined : value;
}

function upstreamOf(source: ModelSource): Upstream {
  const base = parameter(source, 'base_url');
  if (base === undefined) throw TesseraError.invalidArg(`model '${source.name}': the openai backend needs the parameter 'base_url'`);
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw TesseraError.invalidArg(`model '${source.name}': base_url '${base}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw TesseraError.invalidArg(`model '${source.name}': base_url must be http or https, got '${url.protocol}'`);
  }
  if (url.username !== '' || url.password !== '') {
    throw TesseraError.invalidArg(`model '${source.name}': put credentials in api_key_env, not in base_url`);
  }
  const keyEnv = parameter(source, 'api_key_env');
  const apiKey = keyEnv === undefined ? undefined : process.env[keyEnv];
  if (keyEnv !== undefined && (apiKey === undefined || apiKey === '')) {
    throw TesseraError.invalidArg(`model '${source.name}': the environment variable '${keyEnv}' (api_key_env) is not set`);
  }
  const timeoutText = parameter(source, 'request_timeout_ms');
  const timeoutMs = timeoutText === undefined ? DEFAULT_TIMEOUT_MS : Number(timeoutText);
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
    throw TesseraError.invalidArg(`model '${source.name}': request_timeout_ms must be a positive integer, got '${timeoutText}'`);
  }
  const names = new Set(source.config.input.map((i) => i.name));
  const outputs = new Set(source.config.output.map((o) => o.name));
  if (!names.has('text_input') || !outputs.has('text_output')) {
    throw TesseraError.invalidArg(`model '${source.name}': the openai backend serves models with input 'text_input' and output 'text_output'`);
  }
  return {
    url: `${base.replace(/\/+$/, '')}/completions`,
    model: parameter(source, 'upstream_model') ?? source.name,
    apiKey,
    timeoutMs,
    decoupled: source.config.modelTransactionPolicy?.decoupled === true,
    batching: source.config.maxBatchSize >= 1,
  };
}

function firstElement(request: ExecutionRequest, name: string): Uint8Array | undefined {
  const tensor = request.inputs.find((t) => t.name === name);
  if (tensor === undefined) return undefined;
  if (tensor.datatype === 'BOOL') return tensor.data.subarray(0, 1);
  return decodeBytesElements(tensor.data, undefined, `input '${name}'`)[0];
}

/** The completion request's body: the prompt and the sampling parameters the engine understands. */
function completionBody(upstream: Upstream, request: ExecutionRequest, stream: boolean): Record<string, unknown> {
  const prompt = firstElement(request, 'text_input');
  if (prompt === undefined) throw TesseraError.invalidArg("input 'text_input' must hold one string");
  const body: Record<string, unknown> = { model: upstream.model, prompt: decoder.decode(prompt), stream };
  const samplingText = firstElement(request, 'sampling_parameters');
  if (samplingText !== undefined && samplingText.length > 0) {
    let sampling: unknown;
    try {
      sampling = JSON.parse(decoder.decode(samplingText));
    } catch {
      throw TesseraError.invalidArg('sampling_parameters must be a JSON object');
    }
    if (typeof sampling !== 'object' || sampling === null || Array.isArray(sampling)) {
      throw TesseraError.invalidArg('sampling_parameters must be a JSON object');
    }
    for (const key of ['max_tokens', 'temperature', 'top_p', 'stop', 'seed'] as const) {
      if (Object.hasOwn(sampling, key)) body[key] = (sampling as Record<string, unknown>)[key];
    }
  }
  return body;
}

function textTensor(upstream: Upstream, text: string): Tensor {
  return { name: 'text_output', datatype: 'BYTES', shape: upstream.batching ? [1, 1] : [1], data: encodeBytesElements([text]) };
}

/** Reads an upstream body up to MAX_UPSTREAM_BYTES. */
async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_UPSTREAM_BYTES) {
      await reader.cancel();
      throw TesseraError.unavailable(`the engine's answer is larger than ${MAX_UPSTREAM_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return decoder.decode(Buffer.concat(chunks));
}

/** The text of a completion (or a streamed chunk of one). */
function choiceText(json: unknown): string {
  const choice = (json as { choices?: { text?: unknown }[] } | null)?.choices?.[0];
  return typeof choice?.text === 'string' ? choice.text : '';
}

async function upstreamFailure(response: Response): Promise<TesseraError> {
  const text = await boundedText(response).catch(() => '');
  let message = text.slice(0, 500);
  try {
    const error = (JSON.parse(text) as { error?: { message?: unknown } | string }).error;
    message = typeof error === 'string' ? error : typeof error?.message === 'string' ? error.message : message;
  } catch {
    // not JSON: the text as it came
  }
  return TesseraError.unavailable(`the engine answered ${response.status}: ${message}`);
}

/** Streams the engine's SSE answer: each `data:` JSON chunk's text to `onText`, until `[DONE]` or the end. */
async function readStream(response: Response, onText: (text: string) => void): Promise<void> {
  const reader = response.body?.getReader();
  if (reader === undefined) return;
  let pending = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    if (pending.length > MAX_UPSTREAM_BYTES) throw TesseraError.unavailable('the engine sent an event line that is too long');
    let newline: number;
    while ((newline = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, newline).replace(/\r$/, '');
      pending = pending.slice(newline + 1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') {
        await reader.cancel().catch(() => undefined);
        return;
      }
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        throw TesseraError.unavailable('the engine sent an event that is not JSON');
      }
      const error = (json as { error?: { message?: unknown } } | null)?.error;
      if (error !== undefined) {
        throw TesseraError.unavailable(`the engine failed: ${typeof error.message === 'string' ? error.message : JSON.stringify(error)}`);
      }
      const text = choiceText(json);
      if (text !== '') onText(text);
    }
  }
}

class OpenAIInstance implements BackendInstance {
  private readonly inflight = new Set<AbortController>();

  constructor(
    readonly spec: InstanceSpec,
    private readonly upstream: Upstream,
  ) {}

  async execute(requests: readonly ExecutionRequest[]): Promise<ExecutionBatchResult> {
    const start = process.hrtime.bigint();
    const results = await Promise.all(requests.map((r) => this.one(r)));
    return { results, timing: { computeInputNs: 0, computeInferNs: Number(process.hrtime.bigint() - start), computeOutputNs: 0 } };
  }

  private async one(request: ExecutionRequest): Promise<ExecutionResult> {
    const controller = new AbortController();
    const abort = (): void => controller.abort();
    request.signal?.addEventListener('abort', abort, { once: true });
    if (request.signal?.aborted === true) abort();
    this.inflight.add(controller);
    const timer = setTimeout(() => controller.abort(), this.upstream.timeoutMs);
    try {
      const streamFlag = firstElement(request, 'stream');
      const stream = this.upstream.decoupled && request.onResponse !== undefined && streamFlag !== undefined && streamFlag[0] !== 0;
      const body = completionBody(this.upstream, request, stream);
      const response = await fetch(this.upstream.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.upstream.apiKey === undefined ? {} : { authorization: `Bearer ${this.upstream.apiKey}` }),
        },
        body: JSON.stringify(body),
        signal: controller.signal,
        redirect: 'error',
      });
      clearTimeout(timer);
      if (!response.ok) return { error: await upstreamFailure(response) };
      if (stream) {
        let last: string | undefined;
        // Each piece goes out one step late, so the last one can carry the final flag.
        await readStream(response, (text) => {
          if (last !== undefined) request.onResponse?.([textTensor(this.upstream, last)], false);
          last = text;
        });
        if (last !== undefined) request.onResponse?.([textTensor(this.upstream, last)], true);
        return { outputs: [] };
      }
      let json: unknown;
      try {
        json = JSON.parse(await boundedText(response));
      } catch (error) {
        if (error instanceof TesseraError) throw error;
        throw TesseraError.unavailable('the engine answered with something that is not JSON');
      }
      const exclude = firstElement(request, 'exclude_input_in_output');
      const text = (exclude !== undefined && exclude[0] !== 0 ? '' : String(body['prompt'])) + choiceText(json);
      const outputs = [textTensor(this.upstream, text)];
      if (this.upstream.decoupled) {
        request.onResponse?.(outputs, true);
        return { outputs: [] };
      }
      return { outputs };
    } catch (error) {
      if (controller.signal.aborted && request.signal?.aborted === true) return { error: TesseraError.cancelled('Request was cancelled') };
      if (controller.signal.aborted) return { error: TesseraError.unavailable(`the engine did not answer within ${this.upstream.timeoutMs} ms`) };
      if (error instanceof TesseraError) return { error };
      return { error: TesseraError.unavailable(`the engine could not be reached: ${error instanceof Error ? error.message : String(error)}`) };
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', abort);
      this.inflight.delete(controller);
    }
  }

  close(): Promise<void> {
    for (const controller of this.inflight) controller.abort();
    return Promise.resolve();
  }
}

export function createOpenAIBackend(): Backend {
  return {
    name: OPENAI_BACKEND,
    // Nothing is loaded from the version folder; it only has to exist, as for every Triton model.
    defaultModelFilename: 'model.json',
    // async: a bad config rejects the load (a synchronous throw would escape the loader's allSettled).
    async createInstance(source: ModelSource, spec: InstanceSpec): Promise<BackendInstance> {
      await Promise.resolve();
      return new OpenAIInstance(spec, upstreamOf(source));
    },
  };
}
