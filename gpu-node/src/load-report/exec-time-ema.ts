/**
 * The smoothed execution time of one batch that a node reports per model (`execTimeEmaMs`): an
 * exponential moving average, value ← value + alpha × (sample − value), fed once per EXECUTED BATCH
 * (not per request), so that a gateway can estimate a wait as (queued + inflight) / capacity × EMA.
 *
 * alpha defaults to 0.2: a sample's weight halves about every 3 batches and the last ~10 batches
 * carry 90% of the value, which follows a change of load or batch size within a second or two at
 * typical rates while one slow outlier moves the value by only a fifth of its excess.
 *
 * The repository manager keeps one instance per model name (all versions together, as the report is per
 * model) and calls `observe(ms)` after each execution with the batch's compute time, e.g.
 * `(computeInputNs + computeInferNs + computeOutputNs) / 1e6` from the backend's ExecutionTiming.
 */
import { TesseraError } from '../../../shared/src/errors/index.js';

/** The default smoothing factor (see the module comment). */
export const DEFAULT_EXEC_TIME_EMA_ALPHA = 0.2;

export class ExecTimeEma {
  private current: number | null = null;
  private samples = 0;

  /** `alpha` in (0, 1]: the weight of each new sample; default `DEFAULT_EXEC_TIME_EMA_ALPHA` (0.2). */
  constructor(readonly alpha: number = DEFAULT_EXEC_TIME_EMA_ALPHA) {
    if (!(alpha > 0 && alpha <= 1)) throw TesseraError.invalidArg(`ExecTimeEma alpha must be in (0, 1], got ${alpha}`);
  }

  /**
   * Adds the execution time of one batch, in ms. The first sample is taken as is (no bias toward 0);
   * negative or non-finite samples (a clock glitch, a bug) are ignored rather than poisoning the value.
   */
  observe(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.current = this.current === null ? ms : this.current + this.alpha * (ms - this.current);
    this.samples++;
  }

  /** The smoothed time in ms, or null before the first batch. */
  get valueMs(): number | null {
    return this.current;
  }

  /** How many batches were observed. */
  get count(): number {
    return this.samples;
  }

  /** Forgets everything, e.g. when a model is reloaded with another configuration. */
  reset(): void {
    this.current = null;
    this.samples = 0;
  }
}
