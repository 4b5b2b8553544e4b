/**
 * Writing one HTTP/1.1 answer on a raw connection as node:http's ServerResponse would frame it for a kept-alive
 * request: status line, the caller's headers, Content-Length, Date, `Connection: keep-alive` and
 * `Keep-Alive: timeout=N`, then the body's chunks, in one socket write.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { HTTP_FIELD_VALUE, HTTP_TOKEN } from '../field-syntax.js';

/** A header value node:http would accept in writeHead: HTAB, visible ASCII, space and obs-text; never CR, LF or NUL. */

/** The Date header's value, rendered at most once a second as node:http does. */
let dateText = '';
let dateValidUntil = 0;

export function httpDate(): string {
  const now = Date.now();
  if (now >= dateValidUntil) {
    dateText = new Date(now).toUTCString();
    dateValidUntil = now - (now % 1000) + 1000;
  }
  return dateText;
}

/**
 * The answer's head. Throws on a header name or value that node:http's writeHead would refuse, so no caller can
 * split the head (the values come from our own code, but the check is what keeps it that way).
 */
export function renderAnswerHead(status: number, headers: Readonly<Record<string, string>>, contentLength: number, keepAliveMs: number): string {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
  for (const name in headers) {
    const value = headers[name] as string;
    if (!HTTP_TOKEN.test(name) || !HTTP_FIELD_VALUE.test(value)) throw new TypeError(`invalid answer header ${JSON.stringify(name)}`);
    head += `${name}: ${value}\r\n`;
  }
  // As node:http: no Keep-Alive header when the server sets no keep-alive timeout.
  const keepAlive = keepAliveMs > 0 ? `Keep-Alive: timeout=${Math.floor(keepAliveMs / 1000)}\r\n` : '';
  return `${head}Content-Length: ${contentLength}\r\nDate: ${httpDate()}\r\nConnection: keep-alive\r\n${keepAlive}\r\n`;
}

/**
 * Answers up to this size are copied into one buffer and written once: an `mlp_large` answer (head, JSON header,
 * one 4 KB output) was three entries of a corked writev, whose stream bookkeeping cost more than the copy.
 * Larger answers are written as they are, corked, so a big output is never copied.
 */
export const GATHERED_ANSWER_MAX_BYTES = 64 * 1024;

/** Writes the head and the chunks as one socket write; answers whether the socket wants a 'drain' before more. */
export function writeAnswer(socket: Socket, head: string, chunks: readonly Uint8Array[]): boolean {
  let bytes = head.length; // latin1: one byte per character
  for (const chunk of chunks) bytes += chunk.byteLength;
  if (bytes <= GATHERED_ANSWER_MAX_BYTES) {
    const out = Buffer.allocUnsafe(bytes);
    let at = out.write(head, 0, 'latin1');
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.byteLength;
    }
    return socket.write(out);
  }
  socket.cork();
  let ok = socket.write(head, 'latin1');
  for (const chunk of chunks) if (chunk.byteLength > 0) ok = socket.write(chunk);
  socket.uncork();
  return ok;
}

/** node:http's own answer to a request that took too long to arrive (headersTimeout / requestTimeout). */
export const REQUEST_TIMEOUT_ANSWER = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n';

/** node:http's answer to a request cut short by the client's end of stream. */
export const BAD_REQUEST_ANSWER = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';
