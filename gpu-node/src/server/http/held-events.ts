/**
 * Groups a stream's events into fewer writes (the model's stream interval, shared/src/model-config/
 * stream-interval.ts): the first `leading` events (the first token's: a chat's role chunk and its first
 * piece) are written at once, later ones are held until `events` of them
 * wait or the oldest has waited `maxHoldMs`, then written as one chunk. `flush` writes what waits (the
 * stream's end), `discard` drops it (the client is gone). The bytes are the events' own, concatenated.
 */
import type { StreamInterval } from '../../../../shared/src/model-config/index.js';

/** Most characters held however the interval is set; past it the group is written at once. */
export const MAX_HELD_CHARS = 64 * 1024;

export class HeldEvents {
  private held = '';
  private count = 0;
  private leading: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.flush();
  };

  constructor(
    private readonly interval: StreamInterval,
    private readonly write: (chunk: string) => void,
    leading = 1,
  ) {
    this.leading = leading;
  }

  add(event: string): void {
    if (this.leading > 0 || this.interval.events <= 1) {
      this.leading--;
      this.write(event);
      return;
    }
    this.held = this.count === 0 ? event : this.held + event;
    this.count++;
    if (this.count >= this.interval.events || this.held.length >= MAX_HELD_CHARS) this.flush();
    else this.timer ??= setTimeout(this.onTimer, this.interval.maxHoldMs);
  }

  flush(): void {
    this.stopTimer();
    if (this.count === 0) return;
    const chunk = this.held;
    this.held = '';
    this.count = 0;
    this.write(chunk);
  }

  discard(): void {
    this.stopTimer();
    this.held = '';
    this.count = 0;
  }

  private stopTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
