/**
 * What the gateway reads of an OpenAI completion or chat body before sending it on: the model (routing,
 * permission), the prompt text (tokens charged on admission), `stream`, and what decides caching
 * (`temperature`, `seed`). The checks a gateway can make cheaply are made here, so a bad request costs
 * no queue place, no tokens and no node: malformed messages, `n` other than 1, `max_tokens` below 1,
 * numbers out of range. The node checks the body again (and alone knows the model's context length);
 * unknown fields travel on untouched, as OpenAI-compatible servers ignore them.
 */
import { OpenAIApiError } from './openai-error.js';

export type LlmApiKind = 'completion' | 'chat';

export interface LlmApiRequest {
  readonly kind: LlmApiKind;
  readonly model: string;
  /** The text the prompt tokens are counted from (a chat: every message's role and content). */
  readonly promptText: string;
  readonly stream: boolean;
  /** Absent: the node's default, which samples. */
  readonly temperature: number | undefined;
  readonly seed: number | undefined;
  readonly maxTokens: number | undefined;
  /** The parsed body, to key the cache on (sent on as the client's own bytes). */
  readonly body: Readonly<Record<string, unknown>>;
}

type Body = Record<string, unknown>;

/** One decoder for every LLM body, here and in llm-service.ts (`decode` without `stream` keeps no state between calls). */
export const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

const present = (body: Body, key: string): boolean => Object.hasOwn(body, key) && body[key] !== null && body[key] !== undefined;

function integerAtLeast(body: Body, key: string, min: number): number | undefined {
  if (!present(body, key)) return undefined;
  const value = body[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw OpenAIApiError.invalid(`'${key}' must be an integer >= ${min}, got ${JSON.stringify(value)}`, key);
  }
  return value;
}

function numberIn(body: Body, key: string, min: number, max: number): number | undefined {
  if (!present(body, key)) return undefined;
  const value = body[key];
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw OpenAIApiError.invalid(`'${key}' must be a number from ${min} to ${max}, got ${JSON.stringify(value)}`, key);
  }
  return value;
}

function messageText(content: unknown, index: number): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content)) throw OpenAIApiError.invalid(`messages[${index}].content must be a string or a list of text parts`, 'messages');
  let text = '';
  for (const part of content as unknown[]) {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (p === null || typeof p !== 'object' || p.type !== 'text' || typeof p.text !== 'string') {
      throw OpenAIApiError.invalid(`messages[${index}].content: only text parts ({"type": "text", "text": ...}) are supported`, 'messages');
    }
    text += p.text;
  }
  return text;
}

function chatPrompt(body: Body): string {
  const messages = body['messages'];
  if (!Array.isArray(messages) || messages.length === 0) throw OpenAIApiError.invalid("'messages' must be a non-empty list", 'messages');
  const parts: string[] = [];
  messages.forEach((message: unknown, index) => {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw OpenAIApiError.invalid(`messages[${index}] must be an object with 'role' and 'content'`, 'messages');
    }
    const { role, content } = message as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw OpenAIApiError.invalid(`messages[${index}].role must be one of ${[...ROLES].join(', ')}`, 'messages');
    }
    parts.push(`${role}\n${messageText(content, index)}`);
  });
  return parts.join('\n');
}

function completionPrompt(body: Body): string {
  let prompt = body['prompt'];
  if (Array.isArray(prompt) && prompt.length === 1) prompt = prompt[0];
  if (typeof prompt !== 'string') {
    throw OpenAIApiError.invalid("'prompt' must be a string (or a list of one string); token-id prompts and batches are not supported", 'prompt');
  }
  return prompt;
}

/** Parses the JSON body of /v1/completions (`completion`) or /v1/chat/completions (`chat`). */
export function parseLlmApiRequest(kind: LlmApiKind, raw: Uint8Array): LlmApiRequest {
  let parsed: unknown;
  try {
    parsed = JSON.parse(STRICT_UTF8.decode(raw));
  } catch {
    throw OpenAIApiError.invalid('the request body is not valid UTF-8 JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw OpenAIApiError.invalid('the request body must be a JSON object');
  const body = parsed as Body;
  const model = body['model'];
  if (typeof model !== 'string' || model === '') throw OpenAIApiError.invalid("'model' must be a non-empty string", 'model');
  const n = integerAtLeast(body, 'n', 1);
  if (n !== undefined && n !== 1) throw OpenAIApiError.invalid("only 'n' = 1 is supported", 'n');
  let maxTokens: number | undefined;
  for (const key of kind === 'chat' ? ['max_completion_tokens', 'max_tokens'] : ['max_tokens']) maxTokens ??= integerAtLeast(body, key, 1);
  const temperature = numberIn(body, 'temperature', 0, 2);
  numberIn(body, 'top_p', 0, 1);
  const seed = present(body, 'seed') ? integerAtLeast(body, 'seed', Number.MIN_SAFE_INTEGER) : undefined;
  if (present(body, 'stream') && typeof body['stream'] !== 'boolean') throw OpenAIApiError.invalid("'stream' must be a boolean", 'stream');
  const stream = body['stream'] === true;
  const promptText = kind === 'chat' ? chatPrompt(body) : completionPrompt(body);
  return { kind, model, promptText, stream, temperature, seed, maxTokens, body };
}
