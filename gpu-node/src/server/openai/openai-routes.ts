/**
 * The OpenAI-compatible API on the node's HTTP port (as Triton's OpenAI frontend and vLLM serve it):
 * - GET  /v1/models, /v1/models/{id}: the READY models with the vLLM-style I/O (llm-model.ts);
 * - POST /v1/completions, /v1/chat/completions: one JSON answer, or with `stream: true` Server-Sent
 *   Events of chunks ending with `data: [DONE]`; `usage` counts prompt and completion tokens with the
 *   model's tokenizer (tokenizer.ts). A chat becomes a prompt through the model's chat template.
 *
 * Each request becomes one inference of the model: `text_input` = the prompt, `stream` = true (the
 * model's responses are the completion's pieces), `sampling_parameters` = JSON of max_tokens,
 * temperature, top_p, stop and seed as given, `exclude_input_in_output` = true. Closing the connection
 * cancels the inference. Errors are OpenAI's `{"error": {message, type, param, code}}`; once streaming
 * has begun, one `data: {"error": ...}` event followed by `data: [DONE]`.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import {
  decodeBytesElements,
  encodeBytesElements,
  type InferRequest,
  type InferResponse,
  type Tensor,
} from '../../../../shared/src/tensors/index.js';
import type { NodeCore } from '../../server-api/index.js';
import { payloadBodyLimits } from '../http/body-reader.js';
import { readJsonObject } from '../http/json-body.js';
import type { HttpLimits } from '../http/server-options.js';
import { singleBytesText } from '../http/generate-events.js';
import { sseResponse, type SseProducer, type SseWriter } from '../http/sse.js';
import { llmModelNames, resolveLlmModel, type LlmModel } from './llm-model.js';
import { OpenAIApiError, openAIErrorResponse, toOpenAIApiError } from './openai-error.js';
import { parseChatRequest, parseCompletionRequest, type SamplingRequest } from './openai-requests.js';
import { TextChunks } from './text-chunks.js';
import { MAX_CHARS_PER_TOKEN } from './tokenizer.js';

export interface OpenAIContext {
  readonly core: NodeCore;
  readonly limits: HttpLimits;
}

type Handler = (c: Context) => Response | Promise<Response>;
type Route = (path: string, methods: Partial<Record<'GET' | 'POST', Handler>>) => void;

const decoder = new TextDecoder();

function modelEntry(name: string): Record<string, unknown> {
  return { id: name, object: 'model', created: 0, owned_by: 'tessera' };
}

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
}

/** Every handler answers its own errors, in OpenAI's shape. */
function openAI(handler: Handler): Handler {
  return async (c) => {
    try {
      return await handler(c);
    } catch (error) {
      return openAIErrorResponse(error);
    }
  };
}

async function readBody(context: OpenAIContext, request: Request): Promise<Record<string, unknown>> {
  return openAIBody(readJsonObject(request, payloadBodyLimits(context.limits)));
}

/** The parsed body, any failure to read or parse it an OpenAI 400. */
export async function openAIBody(reading: Promise<Record<string, unknown> | undefined>): Promise<Record<string, unknown>> {
  try {
    const body = await reading;
    if (body === undefined) throw OpenAIApiError.invalid('the request body must be a JSON object');
    return body;
  } catch (error) {
    if (error instanceof OpenAIApiError) throw error;
    throw OpenAIApiError.invalid(error instanceof Error ? error.message : String(error));
  }
}

interface Prepared {
  readonly model: LlmModel;
  readonly request: InferRequest;
  readonly promptTokens: number;
  readonly maxTokens: number;
  readonly params: SamplingRequest;
}

function tensor(model: LlmModel, name: string, datatype: 'BYTES' | 'BOOL', data: Uint8Array): Tensor {
  return { name, datatype, shape: model.batching ? [1, 1] : [1], data };
}

/** The model, the inference request, and the token budget, or the 400 that the context length calls for. */
async function prepare(core: NodeCore, params: SamplingRequest, prompt: string, promptParam: string): Promise<Prepared> {
  const model = await resolveLlmModel(core, params.model);
  if (prompt.length > model.contextLength * MAX_CHARS_PER_TOKEN) {
    // Far too long to fit whatever it counts to: refused without spending the CPU to count it.
    throw OpenAIApiError.invalid(
      `This model's maximum context length is ${model.contextLength} tokens. However, your ${promptParam} has ` +
        `${prompt.length} characters, far more than fit. Please reduce the length of the ${promptParam}.`,
      promptParam,
      'context_length_exceeded',
    );
  }
  const promptTokens = model.tokens.count(prompt);
  const maxTokens = params.maxTokens ?? model.contextLength - promptTokens;
  if (maxTokens < 1 || promptTokens + maxTokens > model.contextLength) {
    const limit = `This model's maximum context length is ${model.contextLength} tokens. However, `;
    const message =
      params.maxTokens === undefined
        ? `${limit}your ${promptParam} resulted in ${promptTokens} tokens, which leaves none for the completion. Please reduce the length of the ${promptParam}.`
        : `${limit}you requested ${promptTokens + params.maxTokens} tokens (${promptTokens} in the ${promptParam}, ${params.maxTokens} in the completion). Please reduce the length of the ${promptParam} or completion.`;
    throw OpenAIApiError.invalid(message, promptParam, 'context_length_exceeded');
  }
  const sampling = {
    max_tokens: maxTokens,
    ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
    ...(params.topP === undefined ? {} : { top_p: params.topP }),
    ...(params.seed === undefined ? {} : { seed: params.seed }),
    ...(params.stop.length === 0 ? {} : { stop: params.stop }),
  };
  const inputs: Tensor[] = [tensor(model, 'text_input', 'BYTES', encodeBytesElements([prompt]))];
  if (model.inputs.has('stream')) inputs.push(tensor(model, 'stream', 'BOOL', Uint8Array.of(1)));
  if (model.inputs.has('sampling_parameters')) {
    inputs.push(tensor(model, 'sampling_parameters', 'BYTES', encodeBytesElements([JSON.stringify(sampling)])));
  }
  if (model.inputs.has('exclude_input_in_output')) inputs.push(tensor(model, 'exclude_input_in_output', 'BOOL', Uint8Array.of(1)));
  const request: InferRequest = { id: '', modelName: model.name, inputs, outputs: [{ name: 'text_output' }], parameters: {} };
  return { model, request, promptTokens, maxTokens, params };
}

function textOf(response: InferResponse): string {
  const output = response.outputs.find((o) => o.name === 'text_output');
  if (output === undefined) return '';
  // One element of valid UTF-8 (every token of an LLM): read in place; anything else decoded in full.
  const single = singleBytesText(output);
  if (single !== undefined) return single;
  return decodeBytesElements(output.data, undefined, "output 'text_output'").map((e) => decoder.decode(e)).join('');
}

interface Generated {
  readonly text: string;
  readonly pieces: number;
}

/** Runs the inference; each piece of text goes to `onText` as the model sends it. */
async function generate(core: NodeCore, prepared: Prepared, signal: AbortSignal, onText: (text: string) => void): Promise<Generated> {
  let text = '';
  let pieces = 0;
  const take = (response: InferResponse): void => {
    const piece = textOf(response);
    if (piece === '') return;
    text += piece;
    pieces += 1;
    onText(piece);
  };
  const decoupled = core.isDecoupled(prepared.model.name);
  const response = await core.infer(prepared.request, { signal, onResponse: take });
  if (!decoupled) take(response);
  return { text, pieces };
}

function finishReason(prepared: Prepared, generated: Generated, completionTokens: number): 'length' | 'stop' {
  return generated.pieces >= prepared.maxTokens || completionTokens >= prepared.maxTokens ? 'length' : 'stop';
}

function usage(prepared: Prepared, completionTokens: number): Record<string, number> {
  return {
    prompt_tokens: prepared.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: prepared.promptTokens + completionTokens,
  };
}

export type Kind = 'completion' | 'chat';

/** The chunk of a stream: a piece of text, or (with `finish`) the last, empty one. */
export function chunk(kind: Kind, id: string, created: number, model: string, text: string | undefined, finish: string | null, first = false): unknown {
  const choice =
    kind === 'completion'
      ? { index: 0, text: text ?? '', logprobs: null, finish_reason: finish }
      : {
          index: 0,
          delta: first ? { role: 'assistant', content: '' } : text === undefined ? {} : { content: text },
          logprobs: null,
          finish_reason: finish,
        };
  return { id, object: kind === 'completion' ? 'text_completion' : 'chat.completion.chunk', created, model, choices: [choice] };
}

/** A completion's answer, apart from how it is sent: one JSON body, or a stream of events. */
export type CompletionReply = { readonly json: unknown } | { readonly stream: SseProducer };

/**
 * Checks a /v1/completions (or chat) body and answers it: with `stream` false the completion is run
 * here (aborted by `signal`); with `stream` true the events' producer is returned, not yet started.
 * Throws what the caller answers as an OpenAI error (openAIErrorAnswer).
 */
export async function completionReply(context: OpenAIContext, body: Record<string, unknown>, signal: AbortSignal, kind: Kind): Promise<CompletionReply> {
  const parsed = kind === 'completion' ? parseCompletionRequest(body) : parseChatRequest(body);
  const model = await resolveLlmModel(context.core, parsed.model);
  const prompt = 'prompt' in parsed ? parsed.prompt : model.template.render(parsed.messages);
  const prepared = await prepare(context.core, parsed, prompt, kind === 'completion' ? 'prompt' : 'messages');
  const id = `${kind === 'completion' ? 'cmpl' : 'chatcmpl'}-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const name = prepared.model.name;
  const count = (text: string) => prepared.model.tokens.count(text);

  if (!parsed.stream) {
    const generated = await generate(context.core, prepared, signal, () => undefined);
    const completionTokens = count(generated.text);
    const finish = finishReason(prepared, generated, completionTokens);
    const choice =
      kind === 'completion'
        ? { index: 0, text: generated.text, logprobs: null, finish_reason: finish }
        : { index: 0, message: { role: 'assistant', content: generated.text }, logprobs: null, finish_reason: finish };
    return {
      json: {
        id,
        object: kind === 'completion' ? 'text_completion' : 'chat.completion',
        created,
        model: name,
        choices: [choice],
        usage: usage(prepared, completionTokens),
      },
    };
  }

  const send = (writer: SseWriter, value: unknown): void => writer.data(JSON.stringify(value));
  // Every piece's chunk is the same JSON around its text: cut once, not serialized per token.
  const pieces = new TextChunks((text) => chunk(kind, id, created, name, text, null));
  return {
    stream: {
      interval: context.core.streamInterval(prepared.model.name),
      // A chat's first token is two events (its role chunk, then its first piece): neither is held.
      leadingEvents: kind === 'chat' ? 2 : 1,
      async produce(writer) {
        // The chat's role chunk goes with the first piece, so a request the model refuses at once is still
        // an ordinary HTTP error (nothing written yet: the SSE writers answer one).
        let roleSent = kind !== 'chat';
        const role = (): void => {
          if (!roleSent) send(writer, chunk(kind, id, created, name, undefined, null, true));
          roleSent = true;
        };
        const generated = await generate(context.core, prepared, writer.signal, (text) => {
          role();
          writer.data(pieces.of(text));
        });
        role();
        const completionTokens = count(generated.text);
        send(writer, chunk(kind, id, created, name, undefined, finishReason(prepared, generated, completionTokens)));
        if (parsed.includeUsage) {
          send(writer, {
            id,
            object: kind === 'completion' ? 'text_completion' : 'chat.completion.chunk',
            created,
            model: name,
            choices: [],
            usage: usage(prepared, completionTokens),
          });
        }
        writer.data('[DONE]');
      },
      onError(error, writer) {
        send(writer, toOpenAIApiError(error).body());
        writer.data('[DONE]');
      },
    },
  };
}

async function complete(context: OpenAIContext, request: Request, kind: Kind): Promise<Response> {
  const reply = await completionReply(context, await readBody(context, request), request.signal, kind);
  if ('json' in reply) return json(reply.json);
  const producer = reply.stream;
  return sseResponse(request.signal, (writer) => producer.produce(writer), (error, writer) => producer.onError(error, writer), producer.interval, producer.leadingEvents);
}

export function registerOpenAIRoutes(route: Route, context: OpenAIContext): void {
  route('/v1/models', {
    GET: openAI(async () => json({ object: 'list', data: (await llmModelNames(context.core)).map(modelEntry) })),
  });
  route('/v1/models/:model', {
    GET: openAI(async (c) => {
      const model = await resolveLlmModel(context.core, c.req.param('model'));
      return json(modelEntry(model.name));
    }),
  });
  route('/v1/completions', { POST: openAI((c) => complete(context, c.req.raw, 'completion')) });
  route('/v1/chat/completions', { POST: openAI((c) => complete(context, c.req.raw, 'chat')) });
}
