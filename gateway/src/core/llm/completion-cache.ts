/**
 * Exact-match caching of deterministic completions. Only a completion whose output is fixed by its
 * input is cached: `temperature` given as 0 (greedy decoding). A request without `temperature` gets
 * the engine's default, which samples, and any temperature above 0 samples: those are never cached
 * (a fixed `seed` with sampling is reproducible on one engine build only, so it is not enough either).
 * Only when the tenant's tier sets `llm.cacheCompletions` (TTL: the tier's `cacheTtlSeconds`), and
 * only non-streamed answers (a `stream: true` request is always sent to a node; see docs/benchmarks.md).
 *
 * The key is the tenant's scope (id + generation, so another tenant, or a re-created one, never reads
 * it), the route and the SHA-256 of the body in canonical form (keys sorted) less the fields that do
 * not change the output (`stream`, `stream_options`, `user`).
 */
import type { AuthContext } from '../auth/index.js';
import { sha256HexSync, tenantScope } from '../auth/index.js';
import type { ResponseCache } from '../ports/index.js';
import type { LlmApiRequest } from './llm-request.js';

const IGNORED = new Set(['stream', 'stream_options', 'user']);

/** JSON with object keys sorted at every level, so equal bodies give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function isDeterministic(request: LlmApiRequest): boolean {
  return request.temperature === 0;
}

/** Cache TTL for this request in seconds, or 0: not cacheable (sampled, streamed, or the tier does not cache). */
export function completionCacheTtl(auth: AuthContext, request: LlmApiRequest): number {
  if (request.stream || !isDeterministic(request) || auth.tier.llm?.cacheCompletions !== true) return 0;
  return auth.tier.cacheTtlSeconds;
}

export function completionCacheKey(prefix: string, auth: AuthContext, request: LlmApiRequest): string {
  const kept = Object.fromEntries(Object.entries(request.body).filter(([key]) => !IGNORED.has(key)));
  return `${prefix}llm:${tenantScope(auth.tenant)}:${request.kind}:${sha256HexSync(canonical(kept))}`;
}

export interface CompletionCache {
  readonly store: ResponseCache;
  /** Prefix of every key (the gateway's keyPrefix). */
  readonly prefix: string;
}
