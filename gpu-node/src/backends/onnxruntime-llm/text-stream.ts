/**
 * Turns a sequence's generated token ids into text pieces as they come: a byte-level token may end in
 * the middle of a UTF-8 character, so a piece is only given out once it decodes without a trailing
 * replacement character; and text that could still be the start of a stop string is held back until it
 * is known not to be one. Decoding re-reads only the tokens since the last piece went out.
 */

export interface Detokenizer {
  decode(ids: readonly number[]): string;
}

export class TextStream {
  private readonly ids: number[] = [];
  /** Tokens before this index are already out as text. */
  private prefixOffset = 0;
  /** Text decoded but not yet given out (it may be the start of a stop string). */
  private held = '';
  private readonly longestStop: number;
  /** All text given out so far. */
  text = '';

  constructor(
    private readonly tokenizer: Detokenizer,
    private readonly stop: readonly string[],
  ) {
    this.longestStop = stop.reduce((m, s) => Math.max(m, s.length), 0);
  }

  /** Adds a token; returns the text that may go out now and whether a stop string was reached. */
  push(id: number): { piece: string; stopped: boolean } {
    this.ids.push(id);
    const decoded = this.tokenizer.decode(this.ids.slice(this.prefixOffset));
    if (decoded.endsWith('\uFFFD')) return { piece: '', stopped: false };
    this.prefixOffset = this.ids.length;
    return this.release(this.held + decoded);
  }

  /** The end of the sequence: whatever is still held goes out (a partial character as U+FFFD). */
  flush(): string {
    let tail = this.held;
    if (this.prefixOffset < this.ids.length) tail += this.tokenizer.decode(this.ids.slice(this.prefixOffset));
    this.held = '';
    this.prefixOffset = this.ids.length;
    this.text += tail;
    return tail;
  }

  private release(pending: string): { piece: string; stopped: boolean } {
    if (this.stop.length > 0) {
      // A stop string may straddle what went out and what is pending.
      const window = this.text.slice(-this.longestStop) + pending;
      const base = this.text.length - Math.min(this.text.length, this.longestStop);
      let cut = -1;
      for (const s of this.stop) {
        const at = window.indexOf(s);
        if (at >= 0 && (cut < 0 || base + at < cut)) cut = base + at;
      }
      if (cut >= 0) {
        const piece = pending.slice(0, Math.max(0, cut - this.text.length));
        this.text += piece;
        this.held = '';
        return { piece, stopped: true };
      }
      const hold = this.heldTail(pending);
      this.held = pending.slice(pending.length - hold);
      const piece = pending.slice(0, pending.length - hold);
      this.text += piece;
      return { piece, stopped: false };
    }
    this.held = '';
    this.text += pending;
    return { piece: pending, stopped: false };
  }

  /** How many trailing characters of `pending` are a proper prefix of some stop string. */
  private heldTail(pending: string): number {
    for (let n = Math.min(pending.length, this.longestStop - 1); n > 0; n--) {
      const tail = pending.slice(pending.length - n);
      if (this.stop.some((s) => s.startsWith(tail))) return n;
    }
    return 0;
  }
}
