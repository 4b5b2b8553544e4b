/**
 * A streamed request sent to its node while its limits are still being decided, and refused before any
 * of the node's bytes reach the client when they say no.
 *
 * Why: a tenant's request-rate and prompt-token decisions go to Redis whenever the gateway's lease does
 * not cover them (a prompt larger than a token lease, a tier too slow to lease, a lease that lapsed while
 * the tenant was idle, as between a user's chat turns): one or two round trips, 0.8-1.7 ms each on the
 * cold path here (docs/benchmarks.md, issue 20), all before the node could start. The node's prefill
 * takes longer than those round trips, so they now run alongside it.
 *
 * What stays exact: the same takes, in the same buckets, decide the request; the client gets the
 * decision's 429 (and nothing of the stream) when refused, or the stream once allowed; the prompt's
 * charge is settled after the first event as before. What changes: a refused request may have reached
 * the node, which is cancelled at once (its model sees the cancellation, as when a client leaves).
 * To keep a refused tenant from costing nodes work request after request, a tenant refused here is
 * decided before sending again until the refusal's retry-after has passed (RecentRefusals): at most
 * one refused request per tenant per refusal reaches a node from this gateway. And a tenant has at most one
 * stream sent before its decision at a time (UndecidedSends): a burst of requests from a tenant whose budget
 * is spent costs nodes one request, not the whole burst, before the first refusal is known.
 */
import type { PromptCharge } from './prompt-charge.js';
import type { StreamedAnswer, WholeAnswer } from './llm-forward.js';

/** Tenants refused recently, kept at most this many (the oldest forgotten first). */
const MAX_REMEMBERED = 10_000;
/** How long a refusal without a retry-after keeps its tenant decided before sending. */
const DEFAULT_REFUSAL_MS = 1_000;

/** Tenants whose last admission was refused, until when: they are decided before their requests are sent. */
export class RecentRefusals {
  private readonly until = new Map<string, number>();

  constructor(private readonly max = MAX_REMEMBERED) {}

  /** Whether `tenant` was refused and its refusal's wait is not over at `now`. */
  refused(tenant: string, now: number): boolean {
    if (this.until.size === 0) return false;
    const until = this.until.get(tenant);
    if (until === undefined) return false;
    if (now < until) return true;
    this.until.delete(tenant);
    return false;
  }

  note(tenant: string, now: number, retryAfterMs: number | undefined): void {
    this.until.delete(tenant);
    if (this.until.size >= this.max) this.until.delete(this.until.keys().next().value!);
    this.until.set(tenant, now + Math.max(retryAfterMs ?? 0, DEFAULT_REFUSAL_MS));
  }
}

/** Tenants with a stream sent to a node before its admission was decided: one each at a time. */
export class UndecidedSends {
  private readonly tenants = new Set<string>();

  /** Claims the tenant's one undecided send; false when it has one already (decide this request first). */
  begin(tenant: string): boolean {
    if (this.tenants.has(tenant)) return false;
    this.tenants.add(tenant);
    return true;
  }

  end(tenant: string): void {
    this.tenants.delete(tenant);
  }
}

export interface OverlappedForward {
  /** The admission (limits, prompt charge): its rejection is the request's answer. */
  readonly admission: Promise<PromptCharge>;
  /**
   * Starts forwarding; `settle` is called once the first event is out (the admitted charge's settlement);
   * `admitted` says whether the admission has said yes by now (a stream may be started to its client then).
   */
  forward(settle: () => void, admitted: () => boolean): Promise<WholeAnswer | StreamedAnswer>;
  /** Stops the node's request (and the wait for a node) when the admission refused it. */
  cancelUpstream(): void;
}

/**
 * Forwards while admitting: answers the node's answer once both are in, or throws the admission's
 * refusal (after cancelling the node's request and ending its relay, if it had begun).
 */
export async function forwardWhileAdmitting(overlap: OverlappedForward): Promise<WholeAnswer | StreamedAnswer> {
  let charge: PromptCharge | undefined;
  const forwarded = overlap.forward(
    () => charge?.settle(),
    () => charge !== undefined,
  );
  // Either may fail while the other is awaited: each has a handler from the start (no unhandled rejection).
  forwarded.catch(() => undefined);
  try {
    charge = await overlap.admission;
  } catch (refusal) {
    overlap.cancelUpstream();
    forwarded.then((answer) => {
      if (answer.kind !== 'stream') return;
      answer.relay.cancel(refusal);
      // Nobody will read the node's answer: ending its iterator closes it (an upstream counts it until then).
      void answer.source[Symbol.asyncIterator]().return?.();
    }, () => undefined);
    throw refusal;
  }
  let answer: WholeAnswer | StreamedAnswer;
  try {
    answer = await forwarded;
  } catch (error) {
    charge.settle();
    throw error;
  }
  if (answer.kind === 'whole') charge.settle();
  return answer;
}
