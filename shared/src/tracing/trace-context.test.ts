import { describe, expect, it } from 'vitest';
import { extractTraceContext, formatTraceparent, isSampled, parseTraceparent, parseTracestate, traceHeaders } from './trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';
const VALID = `00-${TRACE}-${SPAN}-01`;

describe('traceparent', () => {
  it('parses the spec example and formats it back identically', () => {
    const context = parseTraceparent(VALID);
    expect(context).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1 });
    expect(isSampled(context!)).toBe(true);
    expect(formatTraceparent(context!)).toBe(VALID);
  });

  it('keeps unsampled and unknown flag bits, and trims surrounding spaces', () => {
    expect(parseTraceparent(`  00-${TRACE}-${SPAN}-00 `)).toMatchObject({ traceFlags: 0 });
    const flagged = parseTraceparent(`00-${TRACE}-${SPAN}-09`)!;
    expect(isSampled(flagged)).toBe(true);
    expect(formatTraceparent(flagged)).toBe(`00-${TRACE}-${SPAN}-09`);
  });

  it('accepts a future version with extra fields, reading the first four', () => {
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01-what-the-future-holds`)).toEqual({ traceId: TRACE, spanId: SPAN, traceFlags: 1 });
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01`)).toBeDefined();
  });

  it.each([
    ['absent', undefined],
    ['null', null],
    ['empty', ''],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with extra fields', `00-${TRACE}-${SPAN}-01-extra`],
    ['a future version glued to more characters', `cc-${TRACE}-${SPAN}-01x`],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['non-hex flags', `00-${TRACE}-${SPAN}-0g`],
    ['wrong separators', `00_${TRACE}_${SPAN}_01`],
    ['non-hex version', `0x-${TRACE}-${SPAN}-01`],
    ['two headers joined by a comma', `${VALID}, ${VALID}`],
    ['garbage', 'not a traceparent at all, but long enough to pass the length check'],
  ])('ignores an invalid header: %s', (_what, header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('ignores tracestate without a valid traceparent, and keeps it with one', () => {
    expect(parseTraceparent('bogus', 'vendor=1')).toBeUndefined();
    expect(parseTraceparent(VALID, 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE')).toMatchObject({ traceState: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE' });
  });
});

describe('tracestate', () => {
  it('keeps valid members in order, dropping empty, invalid and duplicate ones', () => {
    expect(parseTracestate(' a=1 ,, Bad=2, b@tenant=x, a=3, c= , d=ok ')).toBe('a=1,b@tenant=x,d=ok');
  });
  it('keeps at most 32 members and rejects absurdly long headers', () => {
    const many = Array.from({ length: 40 }, (_, i) => `k${i}=v`).join(',');
    expect(parseTracestate(many)!.split(',')).toHaveLength(32);
    expect(parseTracestate(`a=${'x'.repeat(2000)}`)).toBeUndefined();
  });
  it('is undefined when nothing valid is left', () => {
    expect(parseTracestate('=,,=x')).toBeUndefined();
    expect(parseTracestate(undefined)).toBeUndefined();
  });
});

describe('carrying a context in headers', () => {
  it('round-trips through header maps', () => {
    const context = { traceId: TRACE, spanId: SPAN, traceFlags: 1, traceState: 'a=1' };
    const headers = new Headers(traceHeaders(context));
    expect(headers.get('traceparent')).toBe(VALID);
    expect(extractTraceContext((name) => headers.get(name))).toEqual(context);
  });
  it('sends nothing for no context or an invalid one', () => {
    expect(traceHeaders(undefined)).toEqual({});
    expect(traceHeaders({ traceId: '0'.repeat(32), spanId: SPAN, traceFlags: 1 })).toEqual({});
  });
});
