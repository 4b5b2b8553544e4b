import type { IncomingHttpHeaders } from 'node:http2';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEADLINE_HEADER } from '../../../../shared/src/fleet/index.js';
import { H2StreamHeaderReader, h2StreamHeaders } from './call-bridge.js';

const NOW = 1_800_000_000_000;

/** Every name the map holds, every name the headers carry, and names the pipeline asks that are absent. */
function namesOf(headers: IncomingHttpHeaders, map: Map<string, string>): string[] {
  return [...new Set([...Object.keys(headers), ...map.keys(), DEADLINE_HEADER, 'authorization', 'x-api-key', 'cache-control', 'traceparent', 'prefer', '__proto__', 'constructor', 'tostring'])];
}

function nullProto(entries: Record<string, string | string[]>): IncomingHttpHeaders {
  return Object.assign(Object.create(null) as IncomingHttpHeaders, entries);
}

const cases: [string, IncomingHttpHeaders][] = [
  ['a plain call', nullProto({ ':path': '/inference.GRPCInferenceService/ModelInfer', ':method': 'POST', 'content-type': 'application/grpc', te: 'trailers', authorization: 'Bearer k', 'grpc-timeout': '5S', 'user-agent': 'grpc-node-js/1' })],
  ['refused keys and values', nullProto({ 'x-api-key': 'k\u00e9y', 'accept-encoding': 'gzip', prefer: 'respond-async', 'trace-bin': 'AAAA', 'cache-control': 'no-store', 'grpc-encoding': 'gzip', host: 'x', 'Upper': 'v' })],
  ['repeated headers, one refused in the middle', nullProto({ 'set-thing': ['a', 'b', 'c\u0001', 'd'], authorization: ['Bearer a', 'Bearer b'], 'x-empty': [] as unknown as string[] })],
  ['a deadline sent shorter than the call', nullProto({ [DEADLINE_HEADER]: ' 250 ', authorization: 'Bearer k' })],
  ['a deadline sent longer than the call', nullProto({ [DEADLINE_HEADER]: '999999' })],
  ['a malformed and a zero deadline', nullProto({ [DEADLINE_HEADER]: 'soon' })],
  ['a zero deadline', nullProto({ [DEADLINE_HEADER]: '0' })],
  ['a refused deadline value', nullProto({ [DEADLINE_HEADER]: '25\u00ff' })],
];

describe('H2StreamHeaderReader', () => {
  afterEach(() => vi.restoreAllMocks());

  for (const [label, headers] of cases) {
    for (const deadlineAt of [NOW + 1000, Number.POSITIVE_INFINITY]) {
      it(`reads what h2StreamHeaders holds, name by name: ${label}, ${Number.isFinite(deadlineAt) ? 'with' : 'without'} a deadline`, () => {
        vi.spyOn(Date, 'now').mockReturnValue(NOW);
        const map = h2StreamHeaders(headers, deadlineAt);
        const reader = new H2StreamHeaderReader(headers, deadlineAt);
        for (const name of namesOf(headers, map)) expect(reader.get(name), name).toBe(map.get(name));
      });
    }
  }

  it('takes the time left when the call arrives, not when the deadline is read', () => {
    const now = vi.spyOn(Date, 'now').mockReturnValue(NOW);
    const reader = new H2StreamHeaderReader(nullProto({}), NOW + 1000);
    now.mockReturnValue(NOW + 400);
    expect(reader.get(DEADLINE_HEADER)).toBe('1000');
  });
});
