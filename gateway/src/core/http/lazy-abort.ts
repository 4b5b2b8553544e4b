/**
 * A client's cancellation whose AbortSignal is made only when something asks for it. Node's
 * AbortSignal is an EventTarget: making one per request was about 3 % of a cache hit's CPU, and a hit
 * only asks whether the client already left (`aborted`); a miss hands the signal to the upstream call.
 * A signal made after `abort()` is aborted from the start.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private gone = false;

  get aborted(): boolean {
    return this.gone;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.gone) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** True once a signal was made: for tests and for code that must know whether anyone listens. */
  get signalMade(): boolean {
    return this.controller !== undefined;
  }

  abort(): void {
    if (this.gone) return;
    this.gone = true;
    this.controller?.abort();
  }
}
