import { describe, expect, it } from 'vitest';
import type { NodeModelLoad, NodeView } from '../ports/index.js';
import { expectedWaitMs, room, score } from './node-load.js';
import { createPicker, powerOfTwoChoices, roundRobin } from './pickers.js';

function node(id: string, load: Partial<NodeModelLoad> = {}, extra: { localInflight?: number; sentSinceReport?: number } = {}): NodeView {
  const models = new Map<string, NodeModelLoad>([['m', { queued: 0, inflight: 0, capacity: 4, execTimeEmaMs: null, versions: ['1'], ...load }]]);
  return { id, httpAddress: null, grpcAddress: `${id}:1`, draining: false, models, localInflight: extra.localInflight ?? 0, ...extra };
}

describe('node load figures', () => {
  it('adds what was sent since the report, not everything in flight, when the directory can tell', () => {
    expect(score(node('a', { queued: 2, inflight: 4 }, { localInflight: 5, sentSinceReport: 2 }), 'm')).toBe(2);
    expect(score(node('a', { queued: 2, inflight: 4 }, { localInflight: 2 }), 'm')).toBe(2);
    // capacity 4, overcommit 1: 8 slots
    expect(room(node('a', { queued: 1, inflight: 4 }, { sentSinceReport: 1 }), 'm')).toBe(2);
    expect(room(node('a', { queued: 9, inflight: 4 }), 'm')).toBe(0);
    expect(room(node('a', { inflight: 4 }), 'm', 0)).toBe(0);
  });
});

describe('expected wait, the p2c key', () => {
  it("is the rounds ahead plus this request's own round, times the node's execution time", () => {
    // capacity 4: 3 outstanding = 0.75 of a round ahead, then its own round of 20 ms
    expect(expectedWaitMs(node('a', { queued: 1, inflight: 2, execTimeEmaMs: 20 }), 'm', 99)).toBe(35);
    expect(expectedWaitMs(node('a', { execTimeEmaMs: 20 }), 'm', 99)).toBe(20);
    // a node without a reported time counts at the fallback
    expect(expectedWaitMs(node('b', { inflight: 4 }), 'm', 30)).toBe(60);
  });

  it('sends the next request to a fast node with a round in progress rather than to an idle node 3x slower', () => {
    const slowIdle = node('slow', { execTimeEmaMs: 60, capacity: 2 });
    const picker = powerOfTwoChoices(() => 0);
    // 1.5 rounds ahead at 20 ms (50 ms in all) still answers before one round at 60 ms.
    const fastBusy = node('fast', { queued: 1, inflight: 2, execTimeEmaMs: 20, capacity: 2 });
    expect(picker.pick('m', [slowIdle, fastBusy], (n) => expectedWaitMs(n, 'm', 40))?.id).toBe('fast');
    // ... but not once the fast node's queue is deeper than the slow node's time makes up for.
    const fastDeep = node('fast', { queued: 3, inflight: 2, execTimeEmaMs: 20, capacity: 2 });
    expect(picker.pick('m', [slowIdle, fastDeep], (n) => expectedWaitMs(n, 'm', 40))?.id).toBe('slow');
  });

  it('orders nodes of equal speed exactly as the plain queue-per-capacity score does', () => {
    const a = node('a', { queued: 3, inflight: 4, execTimeEmaMs: 10 });
    const b = node('b', { queued: 1, inflight: 4, execTimeEmaMs: 10 });
    expect(Math.sign(expectedWaitMs(a, 'm', 1) - expectedWaitMs(b, 'm', 1))).toBe(Math.sign(score(a, 'm') - score(b, 'm')));
  });
});

describe('power of two choices', () => {
  it('picks the less loaded of the two it draws, whichever order they come in', () => {
    const busy = node('busy', { queued: 6 });
    const idle = node('idle', { queued: 1 });
    for (const draws of [[0, 0], [0.9, 0.1], [0.5, 0.5]]) {
      let i = 0;
      const picker = powerOfTwoChoices(() => draws[i++ % draws.length]!);
      expect(picker.pick('m', [busy, idle], (n) => score(n, 'm'))?.id).toBe('idle');
    }
  });

  it('never draws the same node twice and handles 0 and 1 candidates', () => {
    const nodes = ['a', 'b', 'c'].map((id) => node(id));
    const picker = powerOfTwoChoices(() => 0.999);
    // Both draws land at the end; the second skips the first, so 'b' and 'c' are compared (tie: first).
    expect(picker.pick('m', nodes, () => 0)?.id).toBe('c');
    expect(picker.pick('m', [], () => 0)).toBeUndefined();
    expect(picker.pick('m', [nodes[0]!], () => 0)?.id).toBe('a');
  });
});

describe('round robin', () => {
  it('takes the nodes in turn per model, ignoring load', () => {
    const picker = roundRobin();
    const nodes = [node('b', { queued: 100 }), node('a')];
    expect([1, 2, 3].map(() => picker.pick('m', nodes, () => 0)?.id)).toEqual(['a', 'b', 'a']);
    expect(picker.pick('other', nodes, () => 0)?.id).toBe('a');
  });

  it('is chosen by name, and an unknown name is a clear error', () => {
    expect(createPicker('round-robin')).toBeDefined();
    expect(() => createPicker('fastest')).toThrow(/unknown routing policy 'fastest': use one of p2c, round-robin/);
  });
});
