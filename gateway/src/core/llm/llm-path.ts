/**
 * Which LLM POST route a request URL names, matched as the Hono routes (llm-routes.ts) match it, for
 * the node:http relay: `/v1/completions`, `/v1/chat/completions`, and
 * `/v2/models/{m}[/versions/{v}]/generate[_stream]`. Anything it is unsure of (an encoded slash, a bad
 * percent escape, a trailing slash) is undefined: left to Hono, which answers it as it always did.
 */
import type { LlmApiKind } from './llm-request.js';

export type LlmPostTarget =
  | { readonly kind: LlmApiKind }
  | { readonly kind: 'generate'; readonly streamed: boolean; readonly model: string; readonly version: string | undefined };

const GENERATE = /^\/v2\/models\/([^/]+)(?:\/versions\/([0-9]+))?\/(generate|generate_stream)$/;

export function matchLlmPostPath(url: string): LlmPostTarget | undefined {
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  if (path === '/v1/completions') return { kind: 'completion' };
  if (path === '/v1/chat/completions') return { kind: 'chat' };
  if (!path.startsWith('/v2/models/')) return undefined;
  const match = GENERATE.exec(path);
  if (match === null) return undefined;
  let model: string;
  try {
    model = decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
  if (model.includes('/')) return undefined;
  return { kind: 'generate', streamed: match[3] === 'generate_stream', model, version: match[2] === undefined ? undefined : BigInt(match[2]).toString() };
}
