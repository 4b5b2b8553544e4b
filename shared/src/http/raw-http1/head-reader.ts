/**
 * The head of one HTTP/1.1 request, read only when it lies inside a strict, well-understood subset: a `POST`,
 * `HTTP/1.1`, a visible-ASCII target, header lines `name: value` of token names and plain field values, each name
 * once, exactly one Content-Length of digits only, and none of Transfer-Encoding, Expect, Upgrade, a Connection
 * other than keep-alive, or a Content-Encoding. Anything else is not refused here: it is answered `handOff`, and
 * the caller gives the connection to node:http, whose parser and answers then stand as they always did. So this
 * reader never has to judge an ambiguous request (smuggling shapes, obs-fold, bare LF, ...): it only has to
 * recognize the plain ones exactly.
 */

/**
 * Longest head the subset takes: half node:http's default bound (`--max-http-header-size`, 16 KiB), so whatever
 * node:http counts in its bound, a head it would refuse (431) is always handed over to it.
 */
export const MAX_HEAD_BYTES = 8 * 1024;
/** More header lines than any infer client sends; beyond it the head goes to node:http. */
export const MAX_HEADER_LINES = 64;

export interface RawRequestHead {
  /** The request target as sent (origin form, visible ASCII). */
  readonly target: string;
  /** Header values by lower-case name, each name at most once. */
  readonly headers: ReadonlyMap<string, string>;
  readonly contentLength: number;
  /** Bytes of the head, CRLFCRLF included: the body starts here. */
  readonly headBytes: number;
}

/** `incomplete`: no CRLFCRLF yet (and not over the bound); `handOff`: outside the subset. */
export type HeadReading = RawRequestHead | 'incomplete' | 'handOff';

const CR = 13;
const LF = 10;
const SPACE = 32;
const TAB = 9;
const REQUEST_LINE_START = 'POST ';
const REQUEST_LINE_END = ' HTTP/1.1';
/** Largest Content-Length with all digits exact in a double (15 digits); larger is node:http's to judge. */
const MAX_LENGTH_DIGITS = 15;

/** tchar of RFC 9110 §5.6.2, by byte. */
const TOKEN = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~") TOKEN[c.charCodeAt(0)] = 1;
for (let c = 48; c <= 57; c++) TOKEN[c] = 1;
for (let c = 65; c <= 90; c++) TOKEN[c] = 1;
for (let c = 97; c <= 122; c++) TOKEN[c] = 1;

/** Names whose presence alone puts a request outside the subset. */
const REFUSED_NAMES = new Set(['transfer-encoding', 'expect', 'upgrade', 'content-encoding', 'te', 'trailer']);

/** Reads the head at the start of `bytes` (bytes after it are left alone). */
export function readRequestHead(bytes: Uint8Array): HeadReading {
  const end = headEnd(bytes);
  if (end === OUTSIDE) return 'handOff';
  if (end < 0) return bytes.byteLength >= MAX_HEAD_BYTES ? 'handOff' : 'incomplete';
  if (end + 4 > MAX_HEAD_BYTES) return 'handOff';
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, end).toString('latin1');
  const lineEnd = text.indexOf('\r\n');
  const requestLine = lineEnd < 0 ? text : text.slice(0, lineEnd);
  const target = requestTarget(requestLine);
  if (target === undefined) return 'handOff';
  const headers = new Map<string, string>();
  let lines = 0;
  for (let at = lineEnd < 0 ? text.length : lineEnd + 2; at < text.length; ) {
    if (++lines > MAX_HEADER_LINES) return 'handOff';
    const next = text.indexOf('\r\n', at);
    const stop = next < 0 ? text.length : next;
    if (!addHeader(headers, text, at, stop)) return 'handOff';
    at = stop + 2;
  }
  const contentLength = lengthOf(headers.get('content-length'));
  if (contentLength === undefined) return 'handOff';
  const connection = headers.get('connection');
  if (connection !== undefined && connection.toLowerCase() !== 'keep-alive') return 'handOff';
  return { target, headers, contentLength, headBytes: end + 4 };
}

/** Returned by headEnd for a byte the subset never has in a head. */
const OUTSIDE = -2;

/**
 * Offset of the CRLFCRLF that ends the head, -1 while it has not come, or OUTSIDE as soon as a byte of the head is
 * outside the subset (so a head that never ends in CRLFCRLF, bare LFs for one, is handed over at once): every byte
 * must be CR followed by LF, HTAB, or 0x20-0x7E (no NUL, no bare CR or LF, no obs-text).
 */
function headEnd(bytes: Uint8Array): number {
  const limit = Math.min(bytes.byteLength, MAX_HEAD_BYTES);
  for (let i = 0; i < limit; i++) {
    const b = bytes[i] as number;
    if (b === CR) {
      if (i + 1 === bytes.byteLength) return -1;
      if (bytes[i + 1] !== LF) return OUTSIDE;
      if (bytes[i + 2] === CR && bytes[i + 3] === LF) return i;
      if (i + 3 >= bytes.byteLength && bytes[i + 2] === CR) return -1;
      i++;
    } else if (b === LF || (b < SPACE && b !== TAB) || b > 126) return OUTSIDE;
  }
  return -1;
}

/** The target of `POST <target> HTTP/1.1` (one space each side, origin form), or undefined. */
function requestTarget(line: string): string | undefined {
  if (!line.startsWith(REQUEST_LINE_START) || !line.endsWith(REQUEST_LINE_END)) return undefined;
  const target = line.slice(REQUEST_LINE_START.length, line.length - REQUEST_LINE_END.length);
  if (target.length === 0 || target.charCodeAt(0) !== 47 /* / */) return undefined;
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if (c <= SPACE || c > 126) return undefined; // a space or a tab inside: not the plain three-part line
  }
  return target;
}

/** Adds `name: value` from text[from, to); false when the line is outside the subset or repeats a name. */
function addHeader(headers: Map<string, string>, text: string, from: number, to: number): boolean {
  const colon = text.indexOf(':', from);
  if (colon <= from || colon >= to) return false;
  for (let i = from; i < colon; i++) {
    if (TOKEN[text.charCodeAt(i)] !== 1) return false; // includes a space before the colon and obs-fold's leading space
  }
  const name = text.slice(from, colon).toLowerCase();
  if (REFUSED_NAMES.has(name) || headers.has(name)) return false;
  let start = colon + 1;
  let stop = to;
  while (start < stop && isWhitespace(text.charCodeAt(start))) start++;
  while (stop > start && isWhitespace(text.charCodeAt(stop - 1))) stop--;
  headers.set(name, text.slice(start, stop));
  return true;
}

function isWhitespace(c: number): boolean {
  return c === SPACE || c === TAB;
}

/** Content-Length as digits only (no sign, space inside, hex or list), or undefined. */
function lengthOf(value: string | undefined): number | undefined {
  if (value === undefined || value.length === 0 || value.length > MAX_LENGTH_DIGITS) return undefined;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  return Number(value);
}
