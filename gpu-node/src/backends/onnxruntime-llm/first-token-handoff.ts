/**
 * The engine thread hands a message with first tokens to the main thread before its next model run (issue 21,
 * tail21). Served per core, both threads share one core, and the kernel's scheduler (EEVDF here) lets a running
 * thread finish its slice: a first token posted as the engine starts its next run waited a scheduler tick
 * (~4 ms) behind that run before the main thread could write it (perf sched, docs/benchmarks.md). So after
 * posting such a message the engine sleeps on a shared counter until the main thread has handled the message
 * (it stores the message's number and wakes the engine), at most `handoffUs`; meanwhile the core is the main
 * thread's. A core time swap, not a cost: the main thread's work for that message is done either way.
 */

/** The numbers a hand-off counts (EngineStats.handoff). */
export interface HandoffCounts {
  /** Messages the engine waited for, those whose wait ran out, and the time waited (ns). */
  readonly waits: number;
  readonly timeouts: number;
  readonly waitedNs: number;
  /** When the last wait ended, on process.hrtime's clock in µs (one clock for all threads of the process). */
  readonly lastWakeUs: number;
}

/** The engine thread's side: numbers the messages it waits for and sleeps until each is handled. */
export class HandoffSender {
  private sent = 0;
  private counts = { waits: 0, timeouts: 0, waitedNs: 0, lastWakeUs: 0 };

  constructor(
    private readonly handled: Int32Array,
    private readonly handoffUs: number,
  ) {}

  /** The number for the next message to wait for (0 when hand-offs are off: nothing waits). */
  next(): number {
    if (this.handoffUs <= 0) return 0;
    this.sent = (this.sent + 1) | 0 || 1;
    return this.sent;
  }

  /** Sleeps until the main thread handled message `seq` or `handoffUs` passed; whether it was handled. */
  wait(seq: number): boolean {
    if (seq === 0) return true;
    const start = process.hrtime.bigint();
    const deadline = start + BigInt(this.handoffUs) * 1000n;
    let handled = false;
    for (;;) {
      const seen = Atomics.load(this.handled, 0);
      // Numbers wrap: handled once the main thread's last is at or past seq.
      if (((seen - seq) | 0) >= 0) {
        handled = true;
        break;
      }
      const left = Number(deadline - process.hrtime.bigint()) / 1e6;
      if (left <= 0) break;
      Atomics.wait(this.handled, 0, seen, left);
    }
    this.counts.waits += 1;
    if (!handled) this.counts.timeouts += 1;
    const end = process.hrtime.bigint();
    this.counts.waitedNs += Number(end - start);
    this.counts.lastWakeUs = Number(end / 1000n);
    return handled;
  }

  stats(): HandoffCounts {
    return { ...this.counts };
  }
}

/** The counter both threads share: the number of the last message the main thread handled. */
export function handoffCounter(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
}

/** The main thread's side: marks message `seq` handled and wakes the engine. */
export function markHandled(counter: Int32Array, seq: number): void {
  Atomics.store(counter, 0, seq);
  Atomics.notify(counter, 0);
}
