/**
 * Triton's GetDynamicBatch as a pure function: given the waiting requests in serving order and the time,
 * decide whether to run a batch now (and how many requests from the head), wait, or do nothing.
 *
 * The batch is always a prefix of the serving order — a request that does not fit (too large, or a
 * different shape) stops the scan rather than being skipped, exactly as Triton's cursor does. Expired and
 * cancelled requests are removed from the queue before this runs, which is what Triton's ApplyPolicy does
 * at each cursor position.
 *
 * Triton also counts a payload already handed to the rate limiter but not yet executing ("payload_size").
 * Here a batch is only formed at the moment an instance can start it, so that size is always 0.
 */
import type { DynamicBatcherOptions } from './batcher-options.js';

export interface FormerEntry {
  readonly batchSize: number;
  readonly signature: string;
  readonly enqueuedUs: number;
}

export interface BatchFormingSettings {
  /** max(1, max_batch_size). */
  readonly maxBatchSize: number;
  readonly preferred: ReadonlySet<number>;
  /** The largest preferred size; max_batch_size when none are configured. */
  readonly maxPreferred: number;
  readonly maxQueueDelayUs: number;
}

export type BatchDecision =
  /** Nothing is waiting. */
  | { readonly kind: 'none' }
  /** Run the first `count` requests (`size` batch elements) now. */
  | { readonly kind: 'run'; readonly count: number; readonly size: number }
  /** Hold the pending requests; re-evaluate at `untilUs` at the latest (arrivals re-evaluate earlier). */
  | { readonly kind: 'wait'; readonly untilUs: number };

export function batchFormingSettings(options: DynamicBatcherOptions): BatchFormingSettings {
  const maxBatchSize = Math.max(1, options.maxBatchSize);
  const preferred = options.preferredBatchSizes.length > 0 ? options.preferredBatchSizes : [maxBatchSize];
  return {
    maxBatchSize,
    preferred: new Set(preferred),
    maxPreferred: Math.max(...preferred),
    maxQueueDelayUs: options.maxQueueDelayUs,
  };
}

/**
 * @param waitFromUs the queue delay runs from the later of the oldest request's arrival and this
 *   (an instance's idle start with queueDelayFromIdle; -Infinity for Triton's rule)
 */
export function formBatch(entries: Iterable<FormerEntry>, nowUs: number, settings: BatchFormingSettings, waitFromUs = -Infinity): BatchDecision {
  let count = 0;
  let size = 0;
  /** The largest preferred-size prefix seen (Triton's cursor mark), as a request count and a size. */
  let bestCount = 0;
  let bestSize = 0;
  let sendNow = false;
  let signature = '';
  let oldestUs = Infinity;

  for (const entry of entries) {
    const b = entry.batchSize;
    if (count === 0) {
      signature = entry.signature;
    } else {
      // Passing the largest preferred size without having hit a preferred size: what we have is the
      // best batch that can be formed; keep scanning only to learn whether max_batch_size is reachable.
      if (size + b > settings.maxPreferred && bestCount === 0) {
        bestCount = count;
        bestSize = size;
      }
      if (size + b > settings.maxBatchSize || entry.signature !== signature) {
        sendNow = true;
        break;
      }
    }
    count += 1;
    size += b;
    oldestUs = Math.min(oldestUs, entry.enqueuedUs);
    if (settings.preferred.has(size)) {
      bestCount = count;
      bestSize = size;
    }
  }

  if (count === 0) return { kind: 'none' };
  const delay = settings.maxQueueDelayUs;
  const startUs = Math.max(oldestUs, waitFromUs);
  const delayExceeded = delay !== 0 && nowUs - startUs >= delay;
  if (bestCount !== 0 && !delayExceeded) return { kind: 'run', count: bestCount, size: bestSize };
  if (sendNow || size >= settings.maxPreferred || delayExceeded || delay === 0) return { kind: 'run', count, size };
  return { kind: 'wait', untilUs: startUs + delay };
}
