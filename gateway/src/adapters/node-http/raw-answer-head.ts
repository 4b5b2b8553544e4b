/**
 * An HTTP/1.1 answer head read strictly (status line, header lines, the body's framing), for the raw answer reader
 * (raw-answer-reader.ts), and a one-entry memo of the last head a node sent.
 *
 * Why the memo: a node answers every stream with the same head but for its Date value, and reading one (split into
 * lines, two checks and a lower-casing per line, a fresh object whose keys V8 looks up in its string table) was the
 * largest step between a node's first event and the client's first write: ~145 µs of cold CPU per stream at one
 * stream (docs/benchmarks.md, issue 20, 2026-11-28a). A head equal to the last one, or equal but for the value of its
 * one `Date` line, is the same reading with that value: it is taken from the memo. Anything else is read in full.
 */
import { HTTP_FIELD_VALUE, HTTP_TOKEN } from '../../../../shared/src/http/index.js';

export class MalformedAnswer extends Error {}

/** How the body after a head is delimited; `invalid`: a framing header the reader refuses (once the head is out). */
export type AnswerFraming =
  | { readonly kind: 'chunked' }
  | { readonly kind: 'length'; readonly length: number }
  | { readonly kind: 'none' }
  | { readonly kind: 'to-close' }
  | { readonly kind: 'invalid'; readonly message: string };

export interface ReadAnswerHead {
  readonly status: number;
  /** Lower-case names; repeated headers joined with ', '. A fresh object for every read. */
  readonly headers: Record<string, string>;
  /** HTTP/1.1 without `Connection: close`: the connection may carry another request after this answer. */
  readonly persistent: boolean;
  readonly framing: AnswerFraming;
}

const STATUS_LINE = /^HTTP\/1\.[01] ([2-5]\d\d)(?: [^\r\n]*)?$/;
const CHUNKED: AnswerFraming = Object.freeze({ kind: 'chunked' });
const NONE: AnswerFraming = Object.freeze({ kind: 'none' });
const TO_CLOSE: AnswerFraming = Object.freeze({ kind: 'to-close' });

/** Reads a head (its text up to, not including, the blank line); throws MalformedAnswer for anything outside HTTP/1.1. */
export function readAnswerHead(text: string): ReadAnswerHead {
  const lines = text.split('\r\n');
  const status = STATUS_LINE.exec(lines[0]!);
  if (status === null) throw new MalformedAnswer('the answer does not start with an HTTP/1.1 status line');
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!HTTP_TOKEN.test(name)) throw new MalformedAnswer('a header line of the answer is malformed');
    const lower = name.toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (!HTTP_FIELD_VALUE.test(value)) throw new MalformedAnswer(`the answer's header '${lower}' has a byte a field value cannot hold`);
    headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`;
  }
  const code = Number(status[1]);
  const persistent = !/(?:^|,)\s*close\s*(?:,|$)/i.test(headers.connection ?? '') && lines[0]!.startsWith('HTTP/1.1');
  const chunked = headers['transfer-encoding'];
  const length = headers['content-length'];
  if (chunked !== undefined && length !== undefined) throw new MalformedAnswer('the answer has both Transfer-Encoding and Content-Length');
  return { status: code, headers, persistent, framing: framingOf(code, chunked, length) };
}

function framingOf(code: number, chunked: string | undefined, length: string | undefined): AnswerFraming {
  if (chunked !== undefined) {
    return chunked.toLowerCase() === 'chunked' ? CHUNKED : { kind: 'invalid', message: `the answer's Transfer-Encoding '${chunked}' is not chunked` };
  }
  if (length !== undefined) {
    return /^\d{1,15}$/.test(length) ? Object.freeze({ kind: 'length', length: Number(length) }) : { kind: 'invalid', message: `the answer's Content-Length '${length}' is not a length` };
  }
  return code === 204 || code === 304 ? NONE : TO_CLOSE;
}

/** The one Date line a memo may read around: its value starts after this, and is an IMF-fixdate's 29 characters. */
const DATE_LINE = '\r\nDate: ';
const DATE_VALUE_LENGTH = 29;

interface Remembered {
  readonly text: string;
  readonly head: ReadAnswerHead;
  /** Where the Date value starts in `text`; -1: no such line, the whole text must match. */
  readonly dateAt: number;
  readonly beforeDate: string;
  readonly afterDate: string;
}

/** The last head read through it, and its reading: see the file's comment. */
export class AnswerHeadMemo {
  private last: Remembered | undefined;
  /** Heads answered from the memo (for tests and diagnosis). */
  hits = 0;

  read(text: string): ReadAnswerHead {
    const last = this.last;
    if (last !== undefined && text.length === last.text.length) {
      if (last.dateAt < 0) {
        if (text === last.text) return this.hit(last.head, undefined);
      } else if (text.startsWith(last.beforeDate) && text.endsWith(last.afterDate)) {
        const date = text.slice(last.dateAt, last.dateAt + DATE_VALUE_LENGTH);
        // A value with a CR or LF (or any byte a field cannot hold) would change the lines: read it in full.
        if (HTTP_FIELD_VALUE.test(date)) return this.hit(last.head, date.trim());
      }
    }
    const head = readAnswerHead(text);
    // Only a head the reader accepts whole is remembered.
    if (head.framing.kind !== 'invalid') this.last = remember(text, head);
    return head;
  }

  private hit(head: ReadAnswerHead, date: string | undefined): ReadAnswerHead {
    this.hits += 1;
    const headers = { ...head.headers };
    if (date !== undefined) headers.date = date;
    return { status: head.status, headers, persistent: head.persistent, framing: head.framing };
  }
}

function remember(text: string, head: ReadAnswerHead): Remembered {
  const line = text.indexOf(DATE_LINE);
  const dateAt = line < 0 ? -1 : line + DATE_LINE.length;
  const end = dateAt < 0 ? -1 : text.indexOf('\r\n', dateAt);
  const lineEnd = end < 0 ? text.length : end;
  // Around the Date value only when it is this head's one date (not joined with another line's) and IMF-sized.
  const usable = dateAt >= 0 && lineEnd - dateAt === DATE_VALUE_LENGTH && head.headers.date === text.slice(dateAt, lineEnd).trim();
  const stored = { ...head, headers: { ...head.headers } };
  if (!usable) return { text, head: stored, dateAt: -1, beforeDate: '', afterDate: '' };
  return { text, head: stored, dateAt, beforeDate: text.slice(0, dateAt), afterDate: text.slice(lineEnd) };
}
