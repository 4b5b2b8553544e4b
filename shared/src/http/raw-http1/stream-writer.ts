/**
 * A streamed answer on a raw connection (connection.ts): the head is rendered at once but leaves with the first
 * chunk, in one corked batch; each `write` is one chunk of the chunked body, framed in one buffer, so a caller
 * that writes once per read it relays makes one socket write per read. `end` writes the last chunk and gives the
 * connection back to the next request (or closes it, when the head said `Connection: close`).
 */
import type { Socket } from 'node:net';
import { HTTP_FIELD_VALUE, HTTP_TOKEN } from '../field-syntax.js';
import { STATUS_CODES } from 'node:http';
import { httpDate } from './answer-writer.js';

const HEX = '0123456789abcdef';
const LAST_CHUNK = Buffer.from('0\r\n\r\n', 'latin1');

/**
 * The head of a chunked answer as node:http renders it for a kept-alive request: the caller's headers in order,
 * then Date, Connection, Keep-Alive and, unless the caller named it, `Transfer-Encoding: chunked`. Throws on a
 * header node:http's writeHead would refuse, or on a Content-Length (a chunked answer has none).
 */
export function renderStreamHead(status: number, headers: Readonly<Record<string, string>>, keepAliveMs: number, close: boolean): string {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
  let chunked = false;
  for (const name in headers) {
    const value = headers[name] as string;
    if (!HTTP_TOKEN.test(name) || !HTTP_FIELD_VALUE.test(value)) throw new TypeError(`invalid answer header ${JSON.stringify(name)}`);
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'connection') throw new TypeError(`a streamed answer sets no ${name}`);
    if (lower === 'transfer-encoding') {
      if (value.toLowerCase() !== 'chunked') throw new TypeError(`a streamed answer is chunked, not ${JSON.stringify(value)}`);
      chunked = true;
    }
    head += `${name}: ${value}\r\n`;
  }
  head += `Date: ${httpDate()}\r\n`;
  if (close) head += 'Connection: close\r\n';
  else head += keepAliveMs > 0 ? `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n` : 'Connection: keep-alive\r\n';
  return chunked ? `${head}\r\n` : `${head}Transfer-Encoding: chunked\r\n\r\n`;
}

/** `bytes` framed as one chunk in one buffer, optionally followed by the last chunk. */
export function frameStreamChunk(bytes: Uint8Array, last: boolean): Buffer {
  const length = bytes.byteLength;
  let digits = 1;
  while (length >>> (4 * digits) !== 0 && digits < 8) digits += 1;
  const out = Buffer.allocUnsafe(digits + 2 + length + 2 + (last ? LAST_CHUNK.byteLength : 0));
  for (let i = 0; i < digits; i++) out[i] = HEX.charCodeAt((length >>> (4 * (digits - 1 - i))) & 15);
  out[digits] = 0x0d;
  out[digits + 1] = 0x0a;
  out.set(bytes, digits + 2);
  let at = digits + 2 + length;
  out[at++] = 0x0d;
  out[at++] = 0x0a;
  if (last) out.set(LAST_CHUNK, at);
  return out;
}

export class RawStreamWriter {
  /** The head, until it leaves with the first chunk (or the end). */
  private head: string | undefined;
  private ended = false;

  constructor(
    /** The client's socket: its 'drain' says when a `write` that answered false may go on. */
    readonly socket: Socket,
    head: string,
    /** Called once the last chunk is written. */
    private readonly onEnd: () => void,
  ) {
    this.head = head;
  }

  /** Done: ended, or the socket is gone or ending (writes are then dropped). */
  get closed(): boolean {
    return this.ended || this.socket.destroyed || this.socket.writableEnded;
  }

  /** Writes `bytes` (not empty) as one chunk; false: the client is not keeping up (wait for the socket's 'drain'). */
  write(bytes: Uint8Array): boolean {
    if (this.closed) return false;
    return this.send(frameStreamChunk(bytes, false));
  }

  /** Writes `last` (if any) and the last chunk, then hands the connection on. */
  end(last?: Uint8Array): void {
    if (this.closed) return;
    this.send(last !== undefined && last.byteLength > 0 ? frameStreamChunk(last, true) : LAST_CHUNK);
    this.ended = true;
    this.onEnd();
  }

  /** Sends the head first, once, in the same corked batch. */
  private send(bytes: Buffer): boolean {
    const head = this.head;
    if (head === undefined) return this.socket.write(bytes);
    this.head = undefined;
    this.socket.cork();
    this.socket.write(head, 'latin1');
    const flowing = this.socket.write(bytes);
    this.socket.uncork();
    return flowing;
  }
}
