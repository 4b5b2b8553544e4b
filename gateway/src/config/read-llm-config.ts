/**
 * The LLM parts of the gateway config (core/llm):
 *
 * ```jsonc
 * "llm": {                          // gateway-wide
 *   "maxStreamsPerNode": 256,       // [256] streams of one model one node takes at once; more wait in admission
 *   "maxPromptChars": 524288,       // [512 Ki] longest prompt text counted; longer: 400 before any tokenizing
 *   "chargeEveryTokens": 16,        // [16] completion tokens metered between two charges of a stream
 *   "nodeHttp2": true,              // [true] reach nodes advertising llmH2Address over HTTP/2; false: HTTP/1.1
 *   "nodeRawBelowStreams": 4,       // [4] raw HTTP/1.1 writes to a node with fewer streams in flight (first token sooner); 0: never
 *   "rawFront": true                // [true] the LLM routes on the raw HTTP/1.1 front door too (with httpRawReader); false: node:http
 * },
 * "tiers": { "free": { "llm": {     // per tier; absent: no token limit, no completion cache
 *   "tokensPerMinute": 20000,       // [0 = unlimited] prompt + completion tokens per minute per tenant
 *   "tokensBurst": 20000,           // [tokensPerMinute] most tokens one burst may spend (largest prompt)
 *   "cacheCompletions": false       // [false] cache deterministic completions (temperature 0), TTL cacheTtlSeconds
 * } } }
 * ```
 */
import type { TierLlmLimits } from '../core/ports/index.js';

type Json = Record<string, unknown>;

/** The checks of load-gateway-config.ts this reader uses. */
export interface LlmConfigChecker {
  issue(path: string, message: string): undefined;
  object(value: unknown, path: string): Json | undefined;
  unknownKeys(obj: Json, allowed: readonly string[], path: string): void;
  number(value: unknown, path: string, opts?: { min?: number; max?: number; integer?: boolean }): number | undefined;
  boolean(value: unknown, path: string): boolean | undefined;
}

export interface LlmConfig {
  readonly maxStreamsPerNode: number;
  readonly maxPromptChars: number;
  readonly chargeEveryTokens: number;
  readonly nodeHttp2: boolean;
  readonly nodeRawBelowStreams: number;
  /** The LLM POST routes read by the raw HTTP/1.1 front door (adapters/node-http/llm-raw-front.ts) when httpRawReader is on. */
  readonly rawFront: boolean;
}

export const DEFAULT_LLM_CONFIG: LlmConfig = { maxStreamsPerNode: 256, maxPromptChars: 512 * 1024, chargeEveryTokens: 16, nodeHttp2: true, nodeRawBelowStreams: 4, rawFront: true };

export function readLlmConfig(c: LlmConfigChecker, value: unknown): LlmConfig {
  const obj = c.object(value, '$.llm') ?? {};
  c.unknownKeys(obj, ['maxStreamsPerNode', 'maxPromptChars', 'chargeEveryTokens', 'nodeHttp2', 'nodeRawBelowStreams', 'rawFront'], '$.llm');
  return {
    maxStreamsPerNode: c.number(obj.maxStreamsPerNode, '$.llm.maxStreamsPerNode', { min: 1, integer: true }) ?? DEFAULT_LLM_CONFIG.maxStreamsPerNode,
    maxPromptChars: c.number(obj.maxPromptChars, '$.llm.maxPromptChars', { min: 1, integer: true }) ?? DEFAULT_LLM_CONFIG.maxPromptChars,
    chargeEveryTokens: c.number(obj.chargeEveryTokens, '$.llm.chargeEveryTokens', { min: 1, max: 4096, integer: true }) ?? DEFAULT_LLM_CONFIG.chargeEveryTokens,
    nodeHttp2: c.boolean(obj.nodeHttp2, '$.llm.nodeHttp2') ?? DEFAULT_LLM_CONFIG.nodeHttp2,
    nodeRawBelowStreams: c.number(obj.nodeRawBelowStreams, '$.llm.nodeRawBelowStreams', { min: 0, max: 65536, integer: true }) ?? DEFAULT_LLM_CONFIG.nodeRawBelowStreams,
    rawFront: c.boolean(obj.rawFront, '$.llm.rawFront') ?? DEFAULT_LLM_CONFIG.rawFront,
  };
}

/** A tier's `llm` entry over its base tier's (a built-in tier overridden field by field). */
export function readTierLlm(c: LlmConfigChecker, value: unknown, path: string, base: TierLlmLimits | undefined): TierLlmLimits | undefined {
  const obj = c.object(value, path);
  if (obj === undefined) return base;
  c.unknownKeys(obj, ['tokensPerMinute', 'tokensBurst', 'cacheCompletions'], path);
  const tokensPerMinute = c.number(obj.tokensPerMinute, `${path}.tokensPerMinute`, { min: 0, integer: true }) ?? base?.tokensPerMinute ?? 0;
  const tokensBurst = c.number(obj.tokensBurst, `${path}.tokensBurst`, { min: 1, integer: true }) ?? (obj.tokensPerMinute === undefined ? base?.tokensBurst : undefined) ?? tokensPerMinute;
  if (tokensPerMinute > 0 && tokensBurst < 1) c.issue(`${path}.tokensBurst`, 'must be >= 1 when tokensPerMinute is set');
  const cacheCompletions = c.boolean(obj.cacheCompletions, `${path}.cacheCompletions`) ?? base?.cacheCompletions ?? false;
  return { tokensPerMinute, tokensBurst, cacheCompletions };
}
