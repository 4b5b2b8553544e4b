/**
 * Gathers log lines and hands them on as one text: when `maxChars` are waiting, when the oldest has
 * waited `maxDelayMs`, or when asked (`flush`, e.g. at process exit).
 *
 * Why not sonic-boom's own batching (`minLength`): its write() measures the UTF-8 length of
 * everything already waiting, on every line, so each line cost time in proportion to the batch (a
 * few µs of a gateway cache hit at 8 KiB). Here a line costs an array push; the size that triggers a
 * flush is counted in UTF-16 code units, which is all a threshold needs.
 */

export interface LineBatchTimers {
  setTimeout(task: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: LineBatchTimers = {
  setTimeout: (task, ms) => {
    const timer = setTimeout(task, ms);
    // A waiting batch must not keep the process alive; the exit flush writes it.
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface DeferredFlush {
  /** Runs the flush it is given later (the gateway: right after the answers of the current turn). */
  readonly defer: (flush: () => void) => void;
  /** Past this many code units waiting, a line is written at once: memory stays bounded. */
  readonly hardMaxChars: number;
}

export class LineBatch {
  private lines: string[] = [];
  private chars = 0;
  private timer: unknown;
  private flushQueued = false;

  constructor(
    private readonly sink: (text: string) => void,
    private readonly maxChars: number,
    private readonly maxDelayMs: number,
    private readonly timers: LineBatchTimers = realTimers,
    /** When given, a batch that is due (by size or by age) is written through `defer`, not there and then. */
    private readonly later: DeferredFlush | undefined = undefined,
  ) {}

  write(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.later !== undefined && this.chars >= this.later.hardMaxChars) this.flush();
    else if (this.chars >= this.maxChars) this.due();
    else if (this.timer === undefined) this.timer = this.timers.setTimeout(() => this.due(), this.maxDelayMs);
  }

  private due(): void {
    const deferred = this.later;
    if (deferred === undefined) {
      this.flush();
      return;
    }
    if (this.flushQueued) return;
    this.flushQueued = true;
    deferred.defer(() => {
      this.flushQueued = false;
      this.flush();
    });
  }

  /** Hands on what is waiting, in order; nothing when nothing waits. */
  flush(): void {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.lines.length === 0) return;
    const text = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.sink(text);
  }
}
