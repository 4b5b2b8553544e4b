/** What the gateway app needs to serve the LLM routes (core/llm/llm-routes.ts); built by the entries. */
import type { TokenCounter } from '../../../../shared/src/llm/token-counter.js';
import type { LlmUpstream } from '../ports/index.js';
import type { CompletionCache } from './completion-cache.js';
import type { LlmRouter } from './llm-router.js';

export interface LlmSettings {
  /** Longest prompt text counted (characters); longer prompts are refused before counting. */
  readonly maxPromptChars: number;
  /** Completion tokens between two charges of a stream. */
  readonly chargeEveryTokens: number;
}

export const DEFAULT_MAX_PROMPT_CHARS = 512 * 1024;

export interface LlmDeps {
  readonly router: LlmRouter;
  readonly upstream: LlmUpstream;
  /** The tokenizer prompts and completions are counted with (loaded once). */
  readonly tokenCounter: () => Promise<TokenCounter>;
  /** Absent: no completion cache. */
  readonly cache?: CompletionCache;
  readonly settings?: Partial<LlmSettings>;
}

