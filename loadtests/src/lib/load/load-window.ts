/**
 * What a running load (closed or open loop) records, cut into measurement windows. The load keeps
 * running across windows, as perf_analyzer's does between its stability trials, so consecutive windows
 * see a warmed-up steady state rather than a ramp-up each.
 *
 * A request belongs to the window in which it *completes* (or fails, or is dropped); its latency is
 * whatever the load measured: send → answer in a closed loop, intended send time → answer in an open
 * loop. Requests carry a tag (`seq % tags`), which the caller maps to something of its own, e.g. the
 * API key and so the tier it was sent with, so per-tier figures come from the same samples.
 */

/** What one call may report besides its latency: client-side encode/decode time, in microseconds. */
export interface CallTiming {
  readonly sendUs: number;
  readonly recvUs: number;
}

export interface LoadWindow {
  /** The window as it actually ran (timers fire late on a busy event loop). */
  readonly windowS: number;
  /** Successful requests' latencies in microseconds, and each one's tag, index for index. */
  readonly latenciesUs: readonly number[];
  readonly latencyTags: readonly number[];
  readonly errors: number;
  /** Errors per tag. */
  readonly errorsByTag: readonly number[];
  /** Open loop: intended sends skipped because the cap on outstanding requests was reached. */
  readonly dropped: number;
  /** Requests sent in the window (open loop; a closed loop leaves 0). */
  readonly sent: number;
  /** Sums over the successful requests of the client's encode and decode time, microseconds. */
  readonly sendUsTotal: number;
  readonly recvUsTotal: number;
}

export interface WindowHooks {
  readonly onWindowStart?: () => Promise<void>;
  readonly onWindowEnd?: () => Promise<void>;
}

/** A load that is running; `stop` waits for the requests in flight. */
export interface RunningLoad {
  measure(ms: number, hooks?: WindowHooks): Promise<LoadWindow>;
  /** The first error seen since the load started, warm-up included. */
  firstError(): string | undefined;
  stop(): Promise<void>;
}

interface OpenWindow {
  latenciesUs: number[];
  latencyTags: number[];
  errors: number;
  errorsByTag: number[];
  dropped: number;
  sent: number;
  sendUsTotal: number;
  recvUsTotal: number;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The bookkeeping shared by the closed and open loops. */
export class WindowRecorder {
  private open: OpenWindow | undefined;
  private first: string | undefined;

  constructor(private readonly tags: number) {}

  tagOf(seq: number): number {
    return seq % this.tags;
  }

  success(latencyUs: number, seq: number, timing: CallTiming | void): void {
    const w = this.open;
    if (w === undefined) return;
    w.latenciesUs.push(latencyUs);
    w.latencyTags.push(this.tagOf(seq));
    if (timing) {
      w.sendUsTotal += timing.sendUs;
      w.recvUsTotal += timing.recvUs;
    }
  }

  failure(error: unknown, seq: number): void {
    this.first ??= error instanceof Error ? error.message : String(error);
    const w = this.open;
    if (w === undefined) return;
    w.errors += 1;
    w.errorsByTag[this.tagOf(seq)] = (w.errorsByTag[this.tagOf(seq)] ?? 0) + 1;
  }

  sent(): void {
    if (this.open) this.open.sent += 1;
  }

  dropped(): void {
    if (this.open) this.open.dropped += 1;
  }

  firstError(): string | undefined {
    return this.first;
  }

  async measure(ms: number, hooks: WindowHooks = {}): Promise<LoadWindow> {
    await hooks.onWindowStart?.();
    const w: OpenWindow = {
      latenciesUs: [],
      latencyTags: [],
      errors: 0,
      errorsByTag: new Array<number>(this.tags).fill(0),
      dropped: 0,
      sent: 0,
      sendUsTotal: 0,
      recvUsTotal: 0,
    };
    const start = performance.now();
    this.open = w;
    await sleep(ms);
    this.open = undefined;
    const windowS = (performance.now() - start) / 1000;
    await hooks.onWindowEnd?.();
    return { windowS, ...w };
  }
}

/** Several windows as one (perf_analyzer merges the three stable ones into the reported point). */
export function mergeWindows(windows: readonly LoadWindow[]): LoadWindow {
  const tags = Math.max(0, ...windows.map((w) => w.errorsByTag.length));
  const sum = (f: (w: LoadWindow) => number): number => windows.reduce((a, w) => a + f(w), 0);
  return {
    windowS: sum((w) => w.windowS),
    latenciesUs: windows.flatMap((w) => w.latenciesUs),
    latencyTags: windows.flatMap((w) => w.latencyTags),
    errors: sum((w) => w.errors),
    errorsByTag: Array.from({ length: tags }, (_, t) => sum((w) => w.errorsByTag[t] ?? 0)),
    dropped: sum((w) => w.dropped),
    sent: sum((w) => w.sent),
    sendUsTotal: sum((w) => w.sendUsTotal),
    recvUsTotal: sum((w) => w.recvUsTotal),
  };
}
