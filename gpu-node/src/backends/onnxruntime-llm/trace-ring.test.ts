import { describe, expect, it } from 'vitest';
import { FirstTokenTracer, type FirstTokenTrace, type RunKind } from './first-token-trace.js';
import { TraceRing } from './trace-ring.js';

function trace(id: number, inFlight: RunKind | 'none'): FirstTokenTrace {
  return {
    id,
    promptTokens: id % 97,
    maxTokens: 256 - (id % 13),
    inFlight,
    inFlightMs: id * 0.125 + 1e-9,
    inFlightCpuShare: id % 2 === 0 ? Number.NaN : 0.37,
    messageMs: 1.5,
    queuedMs: id / 7,
    queuedRuns: { decode: id % 3, prefill: id % 5, chunk: 0 },
    prefillMs: 2.25,
    prefillCpuMs: Number.NaN,
    prefillRows: 31,
    prefillPaddedTokens: 31 * 70,
    sentAtMs: 1_795_718_580_518.123 + id,
    firstTokenAtMs: 1_795_718_580_530.456 + id,
  };
}

const KINDS: readonly (RunKind | 'none')[] = ['none', 'decode', 'prefill', 'chunk'];

describe('TraceRing', () => {
  it('gives back every field of each trace exactly (NaN, fractions, epoch milliseconds, each run kind)', () => {
    const ring = new TraceRing(8);
    const pushed = [0, 1, 2, 3].map((i) => trace(i + 1, KINDS[i] as RunKind | 'none'));
    for (const t of pushed) ring.push(t);
    expect(ring.toArray()).toEqual(pushed);
  });

  it('keeps the last `capacity` traces, oldest first, however many went past', () => {
    const ring = new TraceRing(5);
    for (let id = 1; id <= 23; id++) ring.push(trace(id, 'decode'));
    expect(ring.size).toBe(5);
    expect(ring.toArray().map((t) => t.id)).toEqual([19, 20, 21, 22, 23]);
    expect(new TraceRing(5).toArray()).toEqual([]);
  });

  it('holds none of the objects it was given: each read builds new ones, and a caller changing them changes nothing kept', () => {
    const ring = new TraceRing(4);
    const given = trace(7, 'prefill');
    ring.push(given);
    const [first] = ring.toArray();
    expect(first).not.toBe(given);
    (first!.queuedRuns as { decode: number }).decode = 99;
    expect(ring.toArray()[0]!.queuedRuns.decode).toBe(given.queuedRuns.decode);
  });

  it('is what the engine\'s tracer keeps: its traces are rebuilt on each read, not the kept objects themselves', () => {
    const tracer = new FirstTokenTracer();
    for (let id = 1; id <= 3; id++) {
      const mark = tracer.arrived(undefined);
      tracer.prefillStarting(mark);
      tracer.firstToken(id, 10 + id, 20, mark, 1, 10 + id);
    }
    const first = tracer.recent();
    expect(first.map((t) => [t.id, t.promptTokens, t.inFlight])).toEqual([[1, 11, 'none'], [2, 12, 'none'], [3, 13, 'none']]);
    (first[0] as { promptTokens: number }).promptTokens = -1;
    expect(tracer.recent()[0]!.promptTokens).toBe(11);
    expect(tracer.recent()[0]).not.toBe(first[0]);
  });
});
