/**
 * The bodies of /v1/completions and /v1/chat/completions, checked field by field. Everything the API
 * cannot honour is refused with an OpenAI-style 400 naming the field, never silently ignored: `n` other
 * than 1, `best_of` above 1, `logprobs`, `echo`, tools, non-text message parts. Unknown fields are
 * ignored, as OpenAI-compatible servers do (clients send extras such as `user`).
 */
import type { ChatMessage } from './chat-template.js';
import { OpenAIApiError } from './openai-error.js';

export interface SamplingRequest {
  readonly model: unknown;
  readonly maxTokens: number | undefined;
  readonly temperature: number | undefined;
  readonly topP: number | undefined;
  readonly seed: number | undefined;
  readonly stop: readonly string[];
  readonly stream: boolean;
  readonly includeUsage: boolean;
}

export interface CompletionRequest extends SamplingRequest {
  readonly prompt: string;
}

export interface ChatRequest extends SamplingRequest {
  readonly messages: readonly ChatMessage[];
}

type Body = Record<string, unknown>;

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const MAX_STOP = 4;

function present(body: Body, key: string): boolean {
  return Object.hasOwn(body, key) && body[key] !== null && body[key] !== undefined;
}

function number(body: Body, key: string, min: number, max: number, minExclusive = false): number | undefined {
  if (!present(body, key)) return undefined;
  const value = body[key];
  if (typeof value !== 'number' || !Number.isFinite(value) || value > max || (minExclusive ? value <= min : value < min)) {
    throw OpenAIApiError.invalid(`'${key}' must be a number ${minExclusive ? 'above' : 'from'} ${min} ${minExclusive ? 'up ' : ''}to ${max}`, key);
  }
  return value;
}

function integer(body: Body, key: string, min: number): number | undefined {
  if (!present(body, key)) return undefined;
  const value = body[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw OpenAIApiError.invalid(`'${key}' must be an integer >= ${min}`, key);
  }
  return value;
}

function bool(body: Body, key: string): boolean | undefined {
  if (!present(body, key)) return undefined;
  if (typeof body[key] !== 'boolean') throw OpenAIApiError.invalid(`'${key}' must be a boolean`, key);
  return body[key];
}

function sampling(body: Body, maxTokensKeys: readonly string[]): SamplingRequest {
  const n = integer(body, 'n', 1);
  if (n !== undefined && n !== 1) throw OpenAIApiError.invalid("only 'n' = 1 is supported", 'n');
  const bestOf = integer(body, 'best_of', 1);
  if (bestOf !== undefined && bestOf !== 1) throw OpenAIApiError.invalid("only 'best_of' = 1 is supported", 'best_of');
  if (present(body, 'logprobs') && body['logprobs'] !== false) throw OpenAIApiError.invalid("'logprobs' is not supported", 'logprobs');
  if (present(body, 'top_logprobs')) throw OpenAIApiError.invalid("'top_logprobs' is not supported", 'top_logprobs');
  if (bool(body, 'echo') === true) throw OpenAIApiError.invalid("'echo' is not supported", 'echo');
  if (Array.isArray(body['tools']) && body['tools'].length > 0) throw OpenAIApiError.invalid("'tools' are not supported", 'tools');
  let maxTokens: number | undefined;
  for (const key of maxTokensKeys) maxTokens ??= integer(body, key, 1);
  const stopValue = present(body, 'stop') ? body['stop'] : [];
  const stop = typeof stopValue === 'string' ? [stopValue] : stopValue;
  if (!Array.isArray(stop) || stop.length > MAX_STOP || stop.some((s) => typeof s !== 'string')) {
    throw OpenAIApiError.invalid(`'stop' must be a string or a list of at most ${MAX_STOP} strings`, 'stop');
  }
  const stream = bool(body, 'stream') ?? false;
  let includeUsage = false;
  if (present(body, 'stream_options')) {
    const options = body['stream_options'];
    if (!stream) throw OpenAIApiError.invalid("'stream_options' is only allowed when 'stream' is true", 'stream_options');
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      throw OpenAIApiError.invalid("'stream_options' must be an object", 'stream_options');
    }
    includeUsage = bool(options as Body, 'include_usage') ?? false;
  }
  return {
    model: body['model'],
    maxTokens,
    temperature: number(body, 'temperature', 0, 2),
    topP: number(body, 'top_p', 0, 1, true),
    seed: integer(body, 'seed', Number.MIN_SAFE_INTEGER),
    stop: (stop as string[]).filter((s) => s !== ''),
    stream,
    includeUsage,
  };
}

export function parseCompletionRequest(body: Body): CompletionRequest {
  let prompt = body['prompt'];
  if (Array.isArray(prompt) && prompt.length === 1) prompt = prompt[0];
  if (typeof prompt !== 'string') {
    throw OpenAIApiError.invalid("'prompt' must be a string (or a list of one string); token-id prompts and batches are not supported", 'prompt');
  }
  return { ...sampling(body, ['max_tokens']), prompt };
}

function messageContent(content: unknown, index: number): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) => {
        const p = part as { type?: unknown; text?: unknown } | null;
        if (p === null || typeof p !== 'object' || p.type !== 'text' || typeof p.text !== 'string') {
          throw OpenAIApiError.invalid(`messages[${index}].content: only text parts ({"type": "text", "text": ...}) are supported`, 'messages');
        }
        return p.text;
      })
      .join('');
  }
  if (content === null || content === undefined) return '';
  throw OpenAIApiError.invalid(`messages[${index}].content must be a string or a list of text parts`, 'messages');
}

export function parseChatRequest(body: Body): ChatRequest {
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) throw OpenAIApiError.invalid("'messages' must be a non-empty list", 'messages');
  const parsed = messages.map((message: unknown, index): ChatMessage => {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw OpenAIApiError.invalid(`messages[${index}] must be an object with 'role' and 'content'`, 'messages');
    }
    const { role, content } = message as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw OpenAIApiError.invalid(`messages[${index}].role must be one of ${[...ROLES].join(', ')}`, 'messages');
    }
    return { role, content: messageContent(content, index) };
  });
  return { ...sampling(body, ['max_completion_tokens', 'max_tokens']), messages: parsed };
}
