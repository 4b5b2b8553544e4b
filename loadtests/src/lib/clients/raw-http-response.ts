/**
 * Incremental HTTP/1.1 response parser for the raw load-generator client (raw-http.ts): bytes go in as
 * the socket delivers them, a complete response comes out. It covers what our servers and the gateway
 * answer: a status line, headers, and a body delimited by Content-Length, by chunked transfer coding
 * or by the end of the connection; 1xx interim answers are skipped. Anything else is a malformed
 * response, which the connection turns into a rejected request (a load generator must not guess).
 *
 * Bytes are never copied on the common path: a body that arrives in one TCP chunk is a view into it.
 */

export interface RawHttpResponse {
  readonly status: number;
  /** Lower-cased names; repeated headers are joined with ", " (as node:http does for most). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

export class MalformedResponseError extends Error {
  constructor(message: string) {
    super(`malformed HTTP response: ${message}`);
    this.name = 'MalformedResponseError';
  }
}

/** Longest status line + headers we accept; a server sending more is broken (node:http allows 16 KiB). */
const MAX_HEAD_BYTES = 64 * 1024;
/** Longest chunk-size line (hex size plus extensions) or trailer line we accept. */
const MAX_LINE_BYTES = 4 * 1024;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;
const DIGITS = /^\d+$/;
const HEX_SIZE = /^[0-9a-fA-F]+/;
const CHUNK_SIZE_REST = /^[ \t]*(?:;.*)?$/;
const TOKEN_CLOSE = /(?:^|,)\s*close\s*(?:,|$)/i;
const TOKEN_KEEP_ALIVE = /(?:^|,)\s*keep-alive\s*(?:,|$)/i;
const LAST_CODING_CHUNKED = /(?:^|,)\s*chunked\s*$/i;
const EMPTY = Buffer.alloc(0);

type State = 'head' | 'fixed' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'until-close';

export class ResponseParser {
  private state: State = 'head';
  /** Unconsumed bytes of a head or line that the last chunk cut short. */
  private pending: Buffer | undefined;
  private status = 0;
  private headers: Record<string, string> = {};
  private keepAlive = true;
  private parts: Buffer[] = [];
  private bodyLength = 0;
  /** Bytes left in the Content-Length body or in the current chunk. */
  private remaining = 0;
  private leftover = false;

  /** Whether bytes of a response have arrived (an idle connection closing is not an error). */
  get started(): boolean {
    return this.state !== 'head' || this.pending !== undefined;
  }

  /**
   * After a complete response: whether the connection may carry the next request (keep-alive, and no
   * unsolicited bytes after the response, which would be read as the next answer).
   */
  get reusable(): boolean {
    return this.keepAlive && !this.leftover;
  }

  /** Feeds one chunk; returns the response it completes. Throws MalformedResponseError. */
  push(chunk: Buffer): RawHttpResponse | undefined {
    let data = chunk;
    if (this.pending !== undefined) {
      data = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    let at = 0;
    while (at < data.length) {
      switch (this.state) {
        case 'head': {
          const end = data.indexOf('\r\n\r\n', at, 'latin1');
          if (end < 0) return this.keep(data, at, MAX_HEAD_BYTES, 'the status line and headers are too long');
          if (end - at > MAX_HEAD_BYTES) throw new MalformedResponseError('the status line and headers are too long');
          this.parseHead(data.toString('latin1', at, end));
          at = end + 4;
          if (this.status < 200) {
            this.headers = {}; // an interim answer (100 Continue, 103 Early Hints): the real one follows
            continue;
          }
          this.chooseBodyMode();
          if (this.state === 'head') return this.finish(data, at);
          break;
        }
        case 'fixed':
        case 'chunk-data': {
          const take = Math.min(this.remaining, data.length - at);
          this.addBody(data, at, take);
          at += take;
          this.remaining -= take;
          if (this.remaining > 0) break;
          if (this.state === 'fixed') return this.finish(data, at);
          this.state = 'chunk-end';
          break;
        }
        case 'chunk-end': {
          if (data.length - at < 2) {
            this.pending = data.subarray(at); // the CRLF was cut in two
            return undefined;
          }
          if (data[at] !== 0x0d || data[at + 1] !== 0x0a) throw new MalformedResponseError('a chunk is not followed by CRLF');
          at += 2;
          this.state = 'chunk-size';
          break;
        }
        case 'chunk-size': {
          const end = data.indexOf('\r\n', at, 'latin1');
          if (end < 0) return this.keep(data, at, MAX_LINE_BYTES, 'a chunk-size line is too long');
          const line = data.toString('latin1', at, end);
          at = end + 2;
          // The size may be followed by ";extensions", which carry nothing we need.
          const hex = HEX_SIZE.exec(line)?.[0];
          if (hex === undefined || hex.length > 12 || !CHUNK_SIZE_REST.test(line.slice(hex.length))) {
            throw new MalformedResponseError(`invalid chunk size '${line.slice(0, 40)}'`);
          }
          this.remaining = parseInt(hex, 16);
          this.state = this.remaining === 0 ? 'trailers' : 'chunk-data';
          break;
        }
        case 'trailers': {
          // Trailer fields are read past and dropped; an empty line ends the message.
          const end = data.indexOf('\r\n', at, 'latin1');
          if (end < 0) return this.keep(data, at, MAX_LINE_BYTES, 'a trailer line is too long');
          const empty = end === at;
          at = end + 2;
          if (empty) return this.finish(data, at);
          break;
        }
        case 'until-close': {
          this.addBody(data, at, data.length - at);
          at = data.length;
          break;
        }
      }
    }
    return undefined;
  }

  /**
   * The peer closed the connection: the response a close-delimited body completes, or undefined when
   * the response (if one had started) is incomplete.
   */
  end(): RawHttpResponse | undefined {
    if (this.state !== 'until-close') return undefined;
    return this.finish(EMPTY, 0);
  }

  /** Keeps the unconsumed tail of `data` for the next chunk, failing past `limit` bytes. */
  private keep(data: Buffer, at: number, limit: number, tooLong: string): undefined {
    if (data.length - at > limit) throw new MalformedResponseError(tooLong);
    this.pending = data.subarray(at);
    return undefined;
  }

  private parseHead(head: string): void {
    const lines = head.split('\r\n');
    const statusLine = lines[0] ?? '';
    const match = STATUS_LINE.exec(statusLine);
    if (match === null) throw new MalformedResponseError(`invalid status line '${statusLine.slice(0, 60)}'`);
    this.status = Number(match[2]);
    // Null prototype: a header named "__proto__" must be a plain entry, not a prototype change.
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i] as string;
      const colon = line.indexOf(':');
      if (colon <= 0 || /[\s]/.test(line.slice(0, colon))) {
        throw new MalformedResponseError(`invalid header line '${line.slice(0, 60)}'`);
      }
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      const previous = headers[name];
      headers[name] = previous === undefined ? value : `${previous}, ${value}`;
    }
    this.headers = headers;
    const connection = headers.connection ?? '';
    // HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 closes unless told to keep it.
    this.keepAlive = match[1] === '1' ? !TOKEN_CLOSE.test(connection) : TOKEN_KEEP_ALIVE.test(connection);
  }

  /** Sets the state that reads the body; leaves 'head' when the response has none. */
  private chooseBodyMode(): void {
    this.parts = [];
    this.bodyLength = 0;
    if (this.status === 204 || this.status === 304) return;
    const transferEncoding = this.headers['transfer-encoding'];
    if (transferEncoding !== undefined) {
      // Chunked wins over Content-Length (RFC 9112 6.3); other codings (gzip alone) we cannot delimit.
      if (!LAST_CODING_CHUNKED.test(transferEncoding)) {
        throw new MalformedResponseError(`unsupported transfer-encoding '${transferEncoding}'`);
      }
      this.state = 'chunk-size';
      return;
    }
    const contentLength = this.headers['content-length'];
    if (contentLength !== undefined) {
      if (!DIGITS.test(contentLength) || contentLength.length > 15) {
        throw new MalformedResponseError(`invalid content-length '${contentLength.slice(0, 40)}'`);
      }
      this.remaining = Number(contentLength);
      if (this.remaining > 0) this.state = 'fixed';
      return;
    }
    // Neither: the body runs until the server closes, so the connection cannot be reused.
    this.keepAlive = false;
    this.state = 'until-close';
  }

  private addBody(data: Buffer, at: number, length: number): void {
    if (length === 0) return;
    this.parts.push(at === 0 && length === data.length ? data : data.subarray(at, at + length));
    this.bodyLength += length;
  }

  private finish(data: Buffer, at: number): RawHttpResponse {
    const parts = this.parts;
    const body = parts.length === 0 ? EMPTY : parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, this.bodyLength);
    const response: RawHttpResponse = { status: this.status, headers: this.headers, body };
    this.leftover = at < data.length;
    this.state = 'head';
    this.pending = undefined;
    this.parts = [];
    this.bodyLength = 0;
    return response;
  }
}
