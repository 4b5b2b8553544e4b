/**
 * Issue 20: the one-entry memo of a streamed answer's head (shared/src/http/raw-http1/stream-writer.ts,
 * renderStreamHead). A head is taken from the memo only when every name and value equals the last checked head's,
 * in order, with the same status, keep-alive and close: a value that changed (a hostile one with a line break
 * above all) is checked and rendered in full, never passed through as the last head.
 */
import { describe, expect, it } from 'vitest';
import { renderStreamHead } from '../../shared/src/http/raw-http1/stream-writer.js';

const SSE = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-RateLimit-Remaining': '9' };
const withoutDate = (head: string): string => head.replace(/\r\nDate: [^\r]*\r\n/, '\r\nDate: D\r\n');
const expected = (remaining: string, connection = 'Connection: keep-alive\r\nKeep-Alive: timeout=5\r\n'): string =>
  `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nCache-Control: no-cache\r\nX-RateLimit-Remaining: ${remaining}\r\nDate: D\r\n${connection}Transfer-Encoding: chunked\r\n\r\n`;

describe('the streamed answer head memo', () => {
  it('renders the same head twice alike (the second from the memo), with the Date of the moment', () => {
    expect(withoutDate(renderStreamHead(200, SSE, 5000, false))).toBe(expected('9'));
    const second = renderStreamHead(200, { ...SSE }, 5000, false);
    expect(withoutDate(second)).toBe(expected('9'));
    expect(second).toMatch(/\r\nDate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\r\n/);
  });

  it('a value that changed since the last head is checked: a line break in it throws, never reuses the last head', () => {
    renderStreamHead(200, SSE, 5000, false);
    expect(() => renderStreamHead(200, { ...SSE, 'X-RateLimit-Remaining': '9\r\nSet-Cookie: x=1' }, 5000, false)).toThrow(/invalid answer header/);
    expect(() => renderStreamHead(200, { ...SSE, 'X-RateLimit-Remaining': '9\0' }, 5000, false)).toThrow(/invalid answer header/);
    expect(() => renderStreamHead(200, { ...SSE, 'Content-Length': '5' }, 5000, false)).toThrow(/sets no Content-Length/);
  });

  it('a different value, one header more or less, another keep-alive or a closing connection: rendered in full', () => {
    renderStreamHead(200, SSE, 5000, false);
    expect(withoutDate(renderStreamHead(200, { ...SSE, 'X-RateLimit-Remaining': '8' }, 5000, false))).toBe(expected('8'));
    const more = withoutDate(renderStreamHead(200, { ...SSE, 'X-Extra': 'y' }, 5000, false));
    expect(more).toContain('X-RateLimit-Remaining: 9\r\nX-Extra: y\r\nDate: D\r\n');
    const { 'X-RateLimit-Remaining': _dropped, ...fewer } = SSE;
    expect(withoutDate(renderStreamHead(200, fewer, 5000, false))).not.toContain('X-RateLimit-Remaining');
    expect(withoutDate(renderStreamHead(200, SSE, 5000, true))).toBe(expected('9', 'Connection: close\r\n'));
    expect(withoutDate(renderStreamHead(200, SSE, 0, false))).toBe(expected('9', 'Connection: keep-alive\r\n'));
    expect(renderStreamHead(201, SSE, 5000, false).startsWith('HTTP/1.1 201 Created\r\n')).toBe(true);
  });
});
