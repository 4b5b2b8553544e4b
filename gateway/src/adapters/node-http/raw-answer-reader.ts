/**
 * A strict HTTP/1.1 answer reader for the raw LLM upstream (llm-raw-upstream.ts): the status line and
 * headers (bounded), then a body framed by `Transfer-Encoding: chunked`, `Content-Length`, or the
 * connection's end. Bytes are fed as the socket delivers them; body bytes are handed on as slices of
 * the socket's chunks (no copy, nothing held back: a chunk's bytes go on before the chunk is complete,
 * so a huge chunk-size claim never makes the reader buffer). Anything that breaks HTTP/1.1 throws a
 * `MalformedAnswer`; the caller then destroys the socket, never reusing it.
 */
import { MalformedAnswer, readAnswerHead, type AnswerHeadMemo } from './raw-answer-head.js';

export { MalformedAnswer } from './raw-answer-head.js';

/** Most bytes of a status line plus headers (and of a chunked body's trailers). */
export const MAX_ANSWER_HEAD_BYTES = 16 * 1024;
/** Largest chunk a node may announce: an SSE event or a whole JSON answer is far below it. */
export const MAX_CHUNK_BYTES = 8 * 1024 * 1024;
/** Most bytes of a chunk-size line (size plus extensions). */
const MAX_CHUNK_LINE_BYTES = 256;

export interface AnswerHead {
  readonly status: number;
  /** Lower-case names; repeated headers joined with ', '. */
  readonly headers: Record<string, string>;
}

export interface AnswerEvents {
  head(head: AnswerHead): void;
  /** Body bytes as they come. */
  data(bytes: Buffer): void;
  /** The body ended by its framing; `extra`: bytes that came after it (nobody asked for them). */
  end(extra: boolean): void;
}

type State = 'head' | 'length' | 'chunk-line' | 'chunk-data' | 'chunk-crlf' | 'trailers' | 'to-close' | 'done';

/** The value of an ASCII hex digit, or -1. */
function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  const lower = byte | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

export class RawAnswerReader {
  private state: State = 'head';
  /** Head or line bytes not yet complete. */
  private pending: Buffer | undefined;
  private left = 0;
  /** The chunk-size line being read: its value, hex digits, bytes, and where in it the reader is. */
  private readonly line = { size: 0, digits: 0, length: 0, inExtension: false, sawCr: false };
  /** Whether the connection may carry another request after this answer. */
  reusable = true;

  /** `memo`: where the last head's reading is kept, for heads that repeat (raw-answer-head.ts); absent: each read in full. */
  constructor(
    private readonly events: AnswerEvents,
    private readonly memo?: AnswerHeadMemo,
  ) {}

  get ended(): boolean {
    return this.state === 'done';
  }

  /** Whether the body runs to the connection's end (then the end is the answer's end). */
  get endsWithConnection(): boolean {
    return this.state === 'to-close';
  }

  feed(input: Buffer): void {
    let bytes = input;
    let at = 0;
    while (at < bytes.length) {
      switch (this.state) {
        case 'head':
        case 'trailers': {
          const head = this.takeUntilBlank(bytes, at);
          if (head === undefined) return;
          bytes = head.rest;
          at = head.at;
          if (this.state === 'head') this.onHead(head.text);
          else this.finish(at < bytes.length);
          break;
        }
        case 'chunk-line':
          at = this.readChunkLine(bytes, at);
          break;
        case 'length':
        case 'chunk-data':
        case 'to-close': {
          const take = this.state === 'to-close' ? bytes.length - at : Math.min(this.left, bytes.length - at);
          const slice = bytes.subarray(at, at + take);
          at += take;
          this.left -= take;
          if (take > 0) this.events.data(slice);
          if (this.state === 'length' && this.left === 0) this.finish(at < bytes.length);
          else if (this.state === 'chunk-data' && this.left === 0) this.state = 'chunk-crlf';
          break;
        }
        case 'chunk-crlf': {
          // The CRLF after a chunk's bytes; it may come split across reads.
          const need = 2 - this.left;
          for (let i = 0; i < need && at < bytes.length; i++, at++) {
            if (bytes[at] !== (this.left === 0 ? 0x0d : 0x0a)) throw new MalformedAnswer('a chunk is not followed by CRLF');
            this.left += 1;
          }
          if (this.left === 2) {
            this.left = 0;
            this.state = 'chunk-line';
          }
          break;
        }
        case 'done':
          // More bytes after a complete answer: a second answer nobody asked for.
          this.reusable = false;
          return;
      }
    }
  }

  /**
   * Collects bytes up to CRLF CRLF (a head, or trailers), bounded; answers the text and where the rest starts.
   * The held part is kept as one Buffer (a head split over reads is rare: it is the node's first write).
   */
  private takeUntilBlank(bytes: Buffer, at: number): { text: string; rest: Buffer; at: number } | undefined {
    const whole = this.pending === undefined ? bytes.subarray(at) : Buffer.concat([this.pending, bytes.subarray(at)]);
    if (this.state === 'trailers' && whole.length >= 2 && whole[0] === 0x0d && whole[1] === 0x0a) {
      this.pending = undefined;
      return { text: '', rest: whole, at: 2 }; // no trailers: the blank line right after the last chunk
    }
    const end = whole.indexOf('\r\n\r\n', 0, 'latin1');
    if (end < 0 ? whole.length > MAX_ANSWER_HEAD_BYTES : end > MAX_ANSWER_HEAD_BYTES) {
      throw new MalformedAnswer(`the answer's head is over ${MAX_ANSWER_HEAD_BYTES} bytes`);
    }
    if (end < 0) {
      this.pending = Buffer.from(whole);
      return undefined;
    }
    this.pending = undefined;
    return { text: whole.toString('latin1', 0, end), rest: whole, at: end + 4 };
  }

  /**
   * A chunk-size line (hex size, optional `;extensions`, CRLF) read byte by byte, across reads, with no
   * allocation: it comes once per event. Answers where the bytes after it start.
   */
  private readChunkLine(bytes: Buffer, from: number): number {
    const line = this.line;
    let at = from;
    while (at < bytes.length) {
      const byte = bytes[at++]!;
      if (++line.length > MAX_CHUNK_LINE_BYTES) throw new MalformedAnswer('a chunk-size line is too long');
      if (line.sawCr) {
        if (byte !== 0x0a || line.digits === 0) throw new MalformedAnswer('a chunk-size line is malformed');
        this.onChunkSize(line.size);
        line.size = line.digits = line.length = 0;
        line.inExtension = line.sawCr = false;
        return at;
      }
      if (byte === 0x0d) line.sawCr = true;
      else if (line.inExtension) {
        if (byte === 0x0a) throw new MalformedAnswer('a chunk-size line is malformed');
      } else {
        const digit = hexValue(byte);
        if (digit >= 0 && line.digits < 8) {
          line.size = line.size * 16 + digit;
          line.digits += 1;
        } else if ((byte === 0x3b || byte === 0x20 || byte === 0x09) && line.digits > 0) line.inExtension = true;
        else throw new MalformedAnswer('a chunk-size line is malformed');
      }
    }
    return at;
  }

  private onHead(text: string): void {
    const head = this.memo === undefined ? readAnswerHead(text) : this.memo.read(text);
    this.reusable = head.persistent;
    this.events.head({ status: head.status, headers: head.headers });
    const framing = head.framing;
    switch (framing.kind) {
      case 'invalid':
        throw new MalformedAnswer(framing.message);
      case 'chunked':
        this.state = 'chunk-line';
        break;
      case 'length':
        this.left = framing.length;
        this.state = 'length';
        if (this.left === 0) this.finish(false);
        break;
      case 'none':
        this.finish(false);
        break;
      case 'to-close':
        this.state = 'to-close';
        this.reusable = false;
        break;
    }
  }

  private onChunkSize(length: number): void {
    if (length > MAX_CHUNK_BYTES) throw new MalformedAnswer(`a chunk of ${length} bytes is over the ${MAX_CHUNK_BYTES}-byte bound`);
    if (length === 0) this.state = 'trailers';
    else {
      this.left = length;
      this.state = 'chunk-data';
    }
  }

  private finish(extra: boolean): void {
    this.state = 'done';
    if (extra) this.reusable = false;
    this.events.end(extra);
  }
}
