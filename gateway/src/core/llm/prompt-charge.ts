/**
 * A prompt's tokens charged without counting them before dispatch. Counting (the BPE tokenizer) was the
 * costliest step of a first token's admission (docs/benchmarks.md, issue 20), so admission takes the
 * tokenizer's upper bound (token-counter.ts: provably >= the count) from the tenant's bucket and the
 * exact count is settled once the first event is written: the difference goes back to the bucket.
 * A tenant is never charged less than its prompt's tokens at any instant, so never gets more than its
 * limit over a window; between admission and settlement it is charged more (its remaining-tokens
 * header reads the bound's charge).
 *
 * The exact count is taken before dispatch instead (as `chargePrompt` always did) when the counter
 * knows no bound, when the bound exceeds the bucket, or when the bucket refuses the bound: a prompt near
 * the budget is decided on its real size.
 */
import type { TokenCounter } from '../../../../shared/src/llm/token-counter.js';
import type { AuthContext } from '../auth/index.js';
import type { GatewayMetrics, RateLimiter } from '../ports/index.js';
import { bucketKey, bucketOf, chargePrompt, limitHeaders } from './token-budget.js';

/** What admission charged; `settle` (idempotent) charges the exact count and meters it. */
export interface PromptCharge {
  settle(): void;
}

const SETTLED: PromptCharge = { settle: () => undefined };

export interface PromptAdmission {
  readonly limiter: RateLimiter;
  readonly metrics: GatewayMetrics;
  readonly auth: AuthContext;
  readonly model: string;
  readonly counter: TokenCounter;
  /** Gets the x-ratelimit-*-tokens headers of the decision. */
  readonly setHeaders: (headers: Record<string, string>) => void;
  /** A settlement's store failure (the bucket keeps the bound's charge). */
  readonly onSettleError?: (error: unknown) => void;
}

/** Charges `text`'s tokens (throws the 429 as chargePrompt does); settle the answer once the first event is out. */
export async function admitPrompt(admission: PromptAdmission, text: string): Promise<PromptCharge> {
  const { limiter, metrics, auth, model, counter, setHeaders } = admission;
  if (text === '') return SETTLED;
  const limits = bucketOf(auth.tier);
  if (limits === undefined) return deferredCount(admission, text, 0);
  const bound = counter.upperBound?.(text);
  if (bound === undefined || bound > limits.elementsBurst) {
    await chargePrompt(limiter, metrics, auth, model, counter.count(text), setHeaders);
    return SETTLED;
  }
  const decision = await limiter.take(bucketKey(auth), bound, limits);
  if (!decision.allowed) {
    // Refused on the bound: the real count decides (and is charged), as it did before bounds.
    await chargePrompt(limiter, metrics, auth, model, counter.count(text), setHeaders);
    return SETTLED;
  }
  setHeaders(limitHeaders(limits, decision.remaining, decision.resetSeconds));
  return deferredCount(admission, text, bound);
}

/** Counts `text` at settlement and moves the bucket from `charged` to the count (nothing to move without a limit). */
function deferredCount(admission: PromptAdmission, text: string, charged: number): PromptCharge {
  let settled = false;
  return {
    settle() {
      if (settled) return;
      settled = true;
      const { limiter, metrics, auth, model, counter } = admission;
      const tokens = counter.count(text);
      if (tokens > 0) metrics.llmTokens?.(auth.tenant.id, model, 'in', tokens);
      const limits = bucketOf(auth.tier);
      // Negative: tokens given back. Positive only if a counter's bound were wrong: the rest is charged.
      const difference = tokens - charged;
      if (limits === undefined || difference === 0) return;
      limiter.take(bucketKey(auth), difference, limits).catch((error: unknown) => admission.onSettleError?.(error));
    },
  };
}
