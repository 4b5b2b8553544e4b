/**
 * The JSON of a stream's text chunks without building and serializing an object per token: within one
 * stream every chunk is the same JSON around its text, so that JSON is cut once around a marker text and
 * each chunk is `prefix + JSON.stringify(text) + suffix` (JSON.stringify of the string is the very
 * escaping it gets inside the object). Where the marker cannot be found exactly once (a model name that
 * contains it), every chunk is serialized whole, so the bytes never differ.
 */

/** A text no model sends: control characters around a name. */
const MARKER = '\u0000\u0001tessera-text\u0001\u0000';
const QUOTED_MARKER = JSON.stringify(MARKER);

export class TextChunks {
  private readonly prefix: string | undefined;
  private readonly suffix: string = '';

  /** `chunkOf(text)` is the chunk object for a text; it must put the text in exactly one string value. */
  constructor(private readonly chunkOf: (text: string) => unknown) {
    const whole = JSON.stringify(chunkOf(MARKER));
    const at = whole.indexOf(QUOTED_MARKER);
    if (at >= 0 && whole.lastIndexOf(QUOTED_MARKER) === at) {
      this.prefix = whole.slice(0, at);
      this.suffix = whole.slice(at + QUOTED_MARKER.length);
    }
  }

  /** The chunk's JSON for `text`. */
  of(text: string): string {
    return this.prefix === undefined ? JSON.stringify(this.chunkOf(text)) : `${this.prefix}${JSON.stringify(text)}${this.suffix}`;
  }
}
