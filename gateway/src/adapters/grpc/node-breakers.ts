/**
 * One opossum circuit breaker per node. An open breaker refuses calls without trying them (they fail
 * as `notAccepted`, so the dispatcher may use another node) and `isOpen` takes the node out of the
 * pick set; after `resetTimeoutMs` the breaker lets one trial call through (half-open) and closes
 * again when it succeeds.
 *
 * Which failures count is `countsAgainstNode` (grpc-errors.ts): the caller's mistakes and the node's
 * own application answers never do; opossum records them as successes (the node did its job), so they
 * also dilute the failure percentage. opossum's own call timeout is off: gRPC deadlines bound calls.
 *
 * A breaker also opens after `consecutiveFailures` counted failures in a row (Envoy's outlier
 * detection does the same, 5 by default): a node that served thousands of calls in the rolling window
 * and then died would otherwise need as many failures again before the percentage crossed 50 %, and
 * stay in the pick set until its load report went stale.
 */
import CircuitBreaker from 'opossum';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { BreakerView } from '../../core/ports/index.js';
import { countsAgainstNode } from './grpc-errors.js';

export type BreakerState = 'closed' | 'open' | 'halfOpen';

export interface NodeBreakerOptions {
  /** Percentage of counted failures in the rolling window that opens the breaker; default 50. */
  readonly errorThresholdPercentage?: number;
  /** Calls needed in the window before the breaker may open at all; default 5. */
  readonly volumeThreshold?: number;
  /** Time open before the half-open trial; default 5000 ms. */
  readonly resetTimeoutMs?: number;
  /** Length of the rolling statistics window; default 10000 ms. */
  readonly rollingWindowMs?: number;
  /** Counted failures in a row that open the breaker whatever the percentage; default 5. */
  readonly consecutiveFailures?: number;
}

export interface NodeBreakers extends BreakerView {
  /** Runs `call` through the node's breaker; rejects at once (UNAVAILABLE, notAccepted) when open. */
  run<T>(nodeId: string, call: () => Promise<T>): Promise<T>;
  state(nodeId: string): BreakerState;
  /** Listens to state changes (for metrics and logs); returns the unsubscribe function. */
  onStateChange(listener: (nodeId: string, state: BreakerState) => void): () => void;
  /** Forgets a node's breaker (the node left). */
  remove(nodeId: string): void;
  close(): void;
}

type Thunk = () => Promise<unknown>;

export function createNodeBreakers(options: NodeBreakerOptions = {}): NodeBreakers {
  const breakers = new Map<string, CircuitBreaker<[Thunk], unknown>>();
  const consecutiveLimit = options.consecutiveFailures ?? 5;
  const listeners = new Set<(nodeId: string, state: BreakerState) => void>();
  const notify = (nodeId: string, state: BreakerState): void => {
    for (const listener of [...listeners]) listener(nodeId, state);
  };

  const breakerOf = (nodeId: string): CircuitBreaker<[Thunk], unknown> => {
    let breaker = breakers.get(nodeId);
    if (breaker === undefined) {
      breaker = new CircuitBreaker<[Thunk], unknown>((thunk: Thunk) => thunk(), {
        timeout: false,
        errorThresholdPercentage: options.errorThresholdPercentage ?? 50,
        volumeThreshold: options.volumeThreshold ?? 5,
        resetTimeout: options.resetTimeoutMs ?? 5000,
        rollingCountTimeout: options.rollingWindowMs ?? 10_000,
        // opossum: true means "not a failure" (the error is still passed to the caller).
        errorFilter: (error: unknown) => !countsAgainstNode(error),
        name: nodeId,
        // Reporting we never read, paid per call otherwise: latency percentiles sort every latency of
        // the window each time stats are computed (on every failure, and for each snapshot), and a
        // snapshot is computed every bucket. Opening and closing only use the counts.
        rollingPercentilesEnabled: false,
        enableSnapshots: false,
      });
      // Counted failures in a row; anything the node answered (a success to opossum) ends the streak.
      let streak = 0;
      const opened = breaker;
      breaker.on('success', () => {
        streak = 0;
      });
      breaker.on('failure', () => {
        streak++;
        if (streak >= consecutiveLimit && opened.closed) opened.open();
      });
      breaker.on('open', () => {
        streak = 0;
        notify(nodeId, 'open');
      });
      breaker.on('halfOpen', () => notify(nodeId, 'halfOpen'));
      breaker.on('close', () => notify(nodeId, 'closed'));
      breakers.set(nodeId, breaker);
    }
    return breaker;
  };

  return {
    // Half-open with its trial not yet taken counts as closed: that trial is how the node comes back.
    isOpen: (nodeId) => {
      const breaker = breakers.get(nodeId);
      return breaker !== undefined && !breaker.closed && !breaker.pendingClose;
    },
    // Not an async function: no further promise or await hop is paid per call (this runs on every
    // upstream call). opossum refuses a call (EOPENBREAKER) only when its breaker is neither closed nor
    // letting its half-open trial through, a state it reads before calling; a closed breaker's promise
    // is handed back as it is, without the refusal's handler (a promise and a closure per call).
    run<T>(nodeId: string, call: () => Promise<T>): Promise<T> {
      const breaker = breakerOf(nodeId);
      if (breaker.closed) return breaker.fire(call) as Promise<T>;
      return (breaker.fire(call) as Promise<T>).then(undefined, (error: unknown) => {
        if ((error as { code?: unknown }).code === 'EOPENBREAKER') {
          throw Object.assign(
            new TesseraError('UNAVAILABLE', `the circuit breaker of node '${nodeId}' is open`, {
              retryAfterMs: options.resetTimeoutMs ?? 5000,
            }),
            { notAccepted: true },
          );
        }
        throw error;
      });
    },
    state: (nodeId) => {
      const breaker = breakers.get(nodeId);
      if (breaker === undefined || breaker.closed) return 'closed';
      return breaker.halfOpen ? 'halfOpen' : 'open';
    },
    onStateChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    remove(nodeId) {
      breakers.get(nodeId)?.shutdown();
      breakers.delete(nodeId);
    },
    close() {
      for (const breaker of breakers.values()) breaker.shutdown();
      breakers.clear();
      listeners.clear();
    },
  };
}
