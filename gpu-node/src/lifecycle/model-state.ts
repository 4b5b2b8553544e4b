/**
 * A model version's lifecycle (Triton's ModelReadyState): the states the repository API reports and
 * the only moves between them. UNKNOWN → LOADING → READY or UNAVAILABLE (with the failure as reason);
 * UNLOADING once an unload starts, then UNAVAILABLE "unloaded" when its accepted requests finished.
 */
export type ModelState = 'UNKNOWN' | 'LOADING' | 'READY' | 'UNLOADING' | 'UNAVAILABLE';

/** Triton's reason for a version that was unloaded on purpose; readiness ignores such versions. */
export const UNLOADED_REASON = 'unloaded';

/** One version's state and the reason that goes with it; ModelVersion drives it. */
export class VersionLifecycle {
  private stateValue: ModelState = 'UNKNOWN';
  private reasonValue = '';

  get state(): ModelState {
    return this.stateValue;
  }
  get reason(): string {
    return this.reasonValue;
  }
  get isReady(): boolean {
    return this.stateValue === 'READY';
  }
  /** Failed or unloaded: nothing runs on it any more. */
  get isUnavailable(): boolean {
    return this.stateValue === 'UNAVAILABLE';
  }
  /** Unloaded on purpose (as opposed to failed): ignored by strict readiness. */
  get isUnloaded(): boolean {
    return this.stateValue === 'UNAVAILABLE' && this.reasonValue === UNLOADED_REASON;
  }

  loading(): void {
    this.stateValue = 'LOADING';
  }
  ready(): void {
    this.stateValue = 'READY';
    this.reasonValue = '';
  }
  failed(reason: string): void {
    this.stateValue = 'UNAVAILABLE';
    this.reasonValue = reason;
  }
  /** An unload started; a version that already failed stays UNAVAILABLE with its reason. */
  unloading(): void {
    if (this.stateValue !== 'UNAVAILABLE') this.stateValue = 'UNLOADING';
  }
  unloaded(): void {
    this.stateValue = 'UNAVAILABLE';
    this.reasonValue = UNLOADED_REASON;
  }
}
