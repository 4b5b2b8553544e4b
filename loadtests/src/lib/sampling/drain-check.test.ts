import { describe, expect, it } from 'vitest';
import { leftoverTotal, reportedOutstanding, sumOf } from './drain-check.js';
import { parsePromText } from './prom-text.js';

describe('drain-check arithmetic', () => {
  it('sums gauges over their labels', () => {
    const samples = parsePromText('tessera_gateway_queue_depth{model="a@1"} 2\ntessera_gateway_queue_depth{model="b@1"} 1\nother 5\n');
    expect(sumOf(samples, 'tessera_gateway_queue_depth')).toBe(3);
    expect(sumOf(samples, 'missing')).toBe(0);
  });

  it('counts queued and executing work of a load report', () => {
    const model = { versions: ['1'], capacity: 4, execTimeEmaMs: 10 };
    expect(reportedOutstanding({ models: [{ ...model, name: 'a', queued: 1, inflight: 2 }, { ...model, name: 'b', queued: 0, inflight: 1 }] })).toBe(4);
  });

  it('is drained only when every reading is 0; a failed reading is not 0', () => {
    expect(leftoverTotal({ gatewayQueued: 0, nodePending: { n1: 0 }, nodeReported: { n1: 0 } })).toBe(0);
    expect(leftoverTotal({ gatewayQueued: 0, nodePending: { n1: 1 }, nodeReported: {} })).toBe(1);
    expect(leftoverTotal({ gatewayQueued: Number.NaN, nodePending: {}, nodeReported: {} })).toBeNaN();
  });
});
