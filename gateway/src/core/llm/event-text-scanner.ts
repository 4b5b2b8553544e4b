/**
 * Reads the generated text out of a stream's SSE events (whole events, as bytes) without a JSON parse
 * per event, for metering. Per stream, the events of an OpenAI or generate stream differ only in their
 * text: `{"id":"x",...,"choices":[{"index":0,"text":"<piece>","finish_reason":null}]}`. The first event
 * is parsed; the bytes before and after its text's string literal become the stream's template, proved
 * by parsing the template around a probe text. An event with the template's exact bytes around a valid
 * JSON string literal has the same structure, so its text is that literal; anything else (the last
 * chunk's finish_reason, usage, escapes the template's text lacked) is parsed as before. Exactness is
 * the point: the counts must equal JSON.parse's.
 */

/** Which API's events a stream carries. */
export type StreamFormat = 'openai' | 'generate';

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;
/** Templates learnt per stream at most: a stream whose events keep changing shape is parsed. */
const MAX_TEMPLATES = 4;
const PROBE = 'tessera-template-probe';
const DONE = encoder.encode('[DONE]');
/** Literals up to this long (and ASCII) are turned into strings without TextDecoder. */
const SHORT_ASCII_BYTES = 24;

function asciiString(bytes: Uint8Array, from: number, to: number): string {
  let text = '';
  for (let i = from; i < to; i++) text += String.fromCharCode(bytes[i]!);
  return text;
}

/** The generated text an event's JSON carries (OpenAI chunk: text or delta.content; generate: text_output). */
export function textOf(format: StreamFormat, value: unknown): string {
  if (typeof value !== 'object' || value === null) return '';
  if (format === 'generate') {
    const text = (value as { text_output?: unknown }).text_output;
    return typeof text === 'string' ? text : '';
  }
  const choice = (value as { choices?: { text?: unknown; delta?: { content?: unknown } }[] }).choices?.[0];
  if (choice === undefined) return '';
  if (typeof choice.text === 'string') return choice.text;
  const content = choice.delta?.content;
  return typeof content === 'string' ? content : '';
}

function sameBytes(a: Uint8Array, aStart: number, b: Uint8Array): boolean {
  if (aStart < 0 || aStart + b.length > a.length) return false;
  for (let i = 0; i < b.length; i++) if (a[aStart + i] !== b[i]) return false;
  return true;
}

function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from: number, end: number): number {
  const first = needle[0];
  for (let i = haystack.indexOf(first!, from); i >= 0 && i + needle.length <= end; i = haystack.indexOf(first!, i + 1)) {
    if (sameBytes(haystack, i, needle)) return i;
  }
  return -1;
}

interface Template {
  /** The payload's bytes up to and including the text literal's opening quote. */
  readonly head: Uint8Array;
  /** From the closing quote to the end of the payload. */
  readonly tail: Uint8Array;
}

export class EventTextScanner {
  private template: Template | undefined;
  private learnt = 0;
  /** Whether a `data: [DONE]` event went by. */
  sawDone = false;

  constructor(
    private readonly format: StreamFormat,
    private readonly countTokens: (text: string) => number,
    /** Counts a piece from its UTF-8 bytes (no escapes in them), sparing its string; absent: decoded and `countTokens`. */
    private readonly countUtf8?: (bytes: Uint8Array, from: number, to: number) => number,
  ) {}

  /** Completion tokens in `bytes` (whole events, each ending in a blank line). */
  tokensIn(bytes: Uint8Array): number {
    let tokens = 0;
    let start = 0;
    while (start < bytes.length) {
      let end = bytes.indexOf(NEWLINE, start);
      if (end < 0) end = bytes.length;
      // A `data:` line: its payload is one JSON document, or [DONE]; other lines are not ours to judge.
      if (end - start > 5 && bytes[start] === 0x64 && bytes[start + 1] === 0x61 && bytes[start + 2] === 0x74 && bytes[start + 3] === 0x61 && bytes[start + 4] === 0x3a) {
        const from = start + (bytes[start + 5] === 0x20 ? 6 : 5);
        if (end - from === DONE.length && sameBytes(bytes, from, DONE)) this.sawDone = true;
        else tokens += this.tokensAt(bytes, from, end);
      }
      start = end + 1;
    }
    return tokens;
  }

  /** Tokens of one `data:` payload, `bytes[from, end)`. */
  private tokensAt(bytes: Uint8Array, from: number, end: number): number {
    const t = this.template;
    if (t !== undefined && end - from >= t.head.length + t.tail.length && sameBytes(bytes, from, t.head) && sameBytes(bytes, end - t.tail.length, t.tail)) {
      const tokens = this.literalTokens(bytes, from + t.head.length, end - t.tail.length);
      if (tokens !== undefined) return tokens;
    }
    const text = this.parsedText(bytes, from, end);
    return text === '' ? 0 : this.countTokens(text);
  }

  /** The text of a payload that does not fit the template, parsed (and learnt from). */
  private parsedText(bytes: Uint8Array, from: number, end: number): string {
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(bytes.subarray(from, end)));
    } catch {
      return ''; // not ours to judge: relayed as the node sent it
    }
    const text = textOf(this.format, value);
    if (text !== '' && this.learnt < MAX_TEMPLATES) this.learn(bytes.subarray(from, end), text);
    return text;
  }

  /** Tokens of the text between the template's quotes when it is one valid JSON string literal's content; else undefined. */
  private literalTokens(bytes: Uint8Array, from: number, to: number): number | undefined {
    let escaped = false;
    let quoted = false;
    let ascii = true;
    for (let i = from; i < to; i++) {
      const b = bytes[i]!;
      if (b < 0x20) return undefined;
      if (b === BACKSLASH) escaped = true;
      else if (b === QUOTE) quoted = true;
      else if (b >= 0x80) ascii = false;
    }
    // Without escapes, any quote is a bare one; with them, JSON.parse judges (a bare quote fails it).
    if (!escaped && quoted) return undefined;
    if (from === to) return 0;
    // Without escapes the bytes are the text's UTF-8: counted from them, no string made.
    if (!escaped && this.countUtf8 !== undefined) return this.countUtf8(bytes, from, to);
    // A streamed piece is mostly a few ASCII bytes: built in JS, without a view and a decoder call per event.
    const raw = ascii && to - from <= SHORT_ASCII_BYTES ? asciiString(bytes, from, to) : decoder.decode(bytes.subarray(from, to));
    if (!escaped) return this.countTokens(raw);
    try {
      const value: unknown = JSON.parse(`"${raw}"`);
      if (typeof value !== 'string') return undefined;
      return value === '' ? 0 : this.countTokens(value);
    } catch {
      return undefined;
    }
  }

  /** Finds where `text`'s literal sits in `payload` (one place only) and proves it with a probe. */
  private learn(payload: Uint8Array, text: string): void {
    this.learnt += 1;
    const literal = encoder.encode(JSON.stringify(text));
    const at = indexOfBytes(payload, literal, 0, payload.length);
    if (at < 0 || indexOfBytes(payload, literal, at + 1, payload.length) >= 0) return;
    const head = payload.slice(0, at + 1);
    const tail = payload.slice(at + literal.length - 1);
    try {
      const probe: unknown = JSON.parse(`${decoder.decode(head)}${PROBE}${decoder.decode(tail)}`);
      if (textOf(this.format, probe) === PROBE) this.template = { head, tail };
    } catch {
      // not a template: events of this shape are parsed
    }
  }
}
