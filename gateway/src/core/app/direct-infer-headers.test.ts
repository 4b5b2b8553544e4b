/** The fast path's answer headers: the request's extra headers set over the answer's, as Web Headers#set would. */
import { describe, expect, it } from 'vitest';
import { withHeaders } from './direct-infer.js';

describe('withHeaders', () => {
  it('keeps every answer header and adds the extra ones', () => {
    const out = withHeaders({ 'Content-Type': 'application/json', 'x-cache': 'HIT' }, { 'x-request-id': 'r1' });
    expect(out).toEqual({ 'Content-Type': 'application/json', 'x-cache': 'HIT', 'x-request-id': 'r1' });
  });

  it('replaces a header of any spelling by the extra one, once', () => {
    const out = withHeaders({ 'X-Request-Id': 'from-answer', 'ratelimit-limit': '5', a: '1' }, { 'x-request-id': 'r1', 'RateLimit-Limit': '10' });
    expect(out).toEqual({ a: '1', 'x-request-id': 'r1', 'RateLimit-Limit': '10' });
    expect(Object.keys(out).map((name) => name.toLowerCase()).sort()).toEqual(['a', 'ratelimit-limit', 'x-request-id']);
  });

  it('leaves its inputs untouched', () => {
    const headers = { 'X-Request-Id': 'a' };
    const extra = { 'x-request-id': 'b' };
    withHeaders(headers, extra);
    expect(headers).toEqual({ 'X-Request-Id': 'a' });
    expect(extra).toEqual({ 'x-request-id': 'b' });
  });
});
