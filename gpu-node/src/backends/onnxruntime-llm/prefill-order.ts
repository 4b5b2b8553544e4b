/**
 * The order in which waiting requests are prefilled (config parameters `prefill_order`, `prefill_aging_ms`).
 * Priority level always comes first. Within a level, `arrival` is first come, first served; `shortest_first`
 * takes the least requested work first (max_tokens, then prompt length, then arrival), so a short request
 * landing behind a wave of long ones (many generations ending and restarting together) is not held for
 * the whole wave's prefill. Aging keeps that from starving anyone: a request that has waited longer than
 * the aging bound goes before every younger one of its level, oldest first. Under `shortest_first` a prefill
 * group (prefill-batch.ts) also holds only requests of comparable work: every member's first token waits for
 * the whole run, so a short request grouped with long ones would wait for their prefill after all.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';

export type PrefillOrder = 'arrival' | 'shortest_first';

export interface PrefillPolicy {
  readonly order: PrefillOrder;
  /** A request waiting longer than this (ms) goes first within its priority level. */
  readonly agingMs: number;
}

/** What the order looks at in a waiting request. */
export interface WaitingKey {
  /** Priority level, lower first. */
  readonly level: number;
  /** Arrival number (ties broken by it: the order is total). */
  readonly arrival: number;
  readonly arrivedNs: bigint;
  readonly maxTokens: number;
  readonly promptLength: number;
}

/**
 * shortest_first: measured (engine alone, docs/benchmarks.md fourth pass) a probe behind a wave of 31 arrivals
 * got its first token ~20x sooner (bench_decoder ~50 ms against ~1 s; tiny ~6 against ~100 ms), while the
 * wave's own TTFT and tokens/s did not get worse (within-level ordering by prompt length even shortens its
 * mean wait); aging bounds what a long request can lose. Through HTTP on the busy box tiny_decoder's runs were
 * not conclusive either way (a quiet-box rerun is to confirm it).
 */
export const DEFAULT_PREFILL_ORDER: PrefillOrder = 'shortest_first';
/**
 * One second: well past the TTFT a wave's own members see when they are not jumped (tens to a few
 * hundred ms on a CPU core), so aging only fires when short requests keep arriving, and it bounds how
 * long a long request can be passed over.
 */
export const DEFAULT_PREFILL_AGING_MS = 1000;

export function parsePrefillOrder(model: string, text: string | undefined): PrefillOrder {
  const value = text ?? DEFAULT_PREFILL_ORDER;
  if (value !== 'arrival' && value !== 'shortest_first') {
    throw TesseraError.invalidArg(`model '${model}': parameter 'prefill_order' must be 'arrival' or 'shortest_first', got '${value}'`);
  }
  return value;
}

/** Whether `a` is prefilled before `b` at time `nowNs`. */
export function goesBefore(a: WaitingKey, b: WaitingKey, policy: PrefillPolicy, nowNs: bigint): boolean {
  return before(a, b, policy, agedBefore(policy, nowNs));
}

/** Arrivals before this instant (ns) have waited past the aging bound. */
function agedBefore(policy: PrefillPolicy, nowNs: bigint): bigint {
  return nowNs - BigInt(policy.agingMs) * 1_000_000n;
}

// The aging instant comes in computed once per choice: a BigInt sum per comparison would allocate.
function before(a: WaitingKey, b: WaitingKey, policy: PrefillPolicy, agedIfBefore: bigint): boolean {
  if (a.level !== b.level) return a.level < b.level;
  if (policy.order === 'shortest_first') {
    const aAged = a.arrivedNs < agedIfBefore;
    const bAged = b.arrivedNs < agedIfBefore;
    if (aAged !== bAged) return aAged;
    if (!aAged) {
      if (a.maxTokens !== b.maxTokens) return a.maxTokens < b.maxTokens;
      if (a.promptLength !== b.promptLength) return a.promptLength < b.promptLength;
    }
  }
  return a.arrival < b.arrival;
}

/** The request to prefill next (undefined when none waits). */
export function nextToPrefill<T extends WaitingKey>(waiting: readonly T[], policy: PrefillPolicy, nowNs: bigint): T | undefined {
  const agedIfBefore = agedBefore(policy, nowNs);
  let best: T | undefined;
  for (const s of waiting) if (best === undefined || before(s, best, policy, agedIfBefore)) best = s;
  return best;
}

/** Requested work more than this many times the group's first member's starts a new group (shortest_first). */
const GROUP_WORK_RATIO = 2;

/** Whether `next` may join the prefill group `first` heads (every member's first token waits for the whole run). */
export function joinsGroup(first: WaitingKey, next: WaitingKey, policy: PrefillPolicy): boolean {
  return policy.order === 'arrival' || next.maxTokens <= GROUP_WORK_RATIO * first.maxTokens;
}
