import { describe, expect, it } from 'vitest';
import { tailReport, tailTable, type ProbeDump, type TimedRequest } from './gateway-c1-tail-report.js';

const MS = 1e6;

/** 200 requests of 1 ms, 1 ms apart; the ones at `slow` take 6 ms. */
function requests(slow: ReadonlySet<number>): TimedRequest[] {
  const timed: TimedRequest[] = [];
  let at = 1000 * MS;
  for (let i = 0; i < 200; i++) {
    const took = slow.has(i) ? 6 * MS : 1 * MS;
    timed.push({ startNs: at, endNs: at + took, mainWaitNs: slow.has(i) ? 3 * MS : 0, mainRunNs: i === 17 ? 4 * MS : 0.5 * MS, otherRunNs: 0, otherByTid: {} });
    at += took + MS;
  }
  return timed;
}

describe('tailReport', () => {
  const slow = new Set([17, 120]);
  const gateway = requests(slow);
  const start = (i: number): number => gateway[i]!.startNs;
  const dump: ProbeDump = {
    pid: 1,
    // A scavenge of 4 ms inside request 17, a major GC between requests 50 and 51.
    gc: [
      [start(17) + 1 * MS, 4, 1],
      [start(51) - 0.5 * MS, 0.2, 4],
    ],
    // A 2 ms timer callback inside request 120, a short one inside request 3.
    timers: [
      [start(120) + 2 * MS, 2 * MS, 'interval', 1000, 'refresh'],
      [start(3) + 0.1 * MS, 0.01 * MS, 'interval', 25, ''],
    ],
    // The gateway's own time: 0.8 ms for each request, 5.5 ms for the slow ones.
    requests: gateway.map((t, i): [number, number, number] => [t.startNs + 0.1 * MS, slow.has(i) ? 5.5 * MS : 0.8 * MS, 70_000]),
    // A Redis write inside request 120; a write to the node inside every request is not Redis.
    outgoing: [[start(120) + 3 * MS, 6379, 40], ...gateway.map((t): [number, number, number] => [t.startNs + 0.2 * MS, 9000, 100])],
  };
  const report = tailReport([{ gateway, direct: requests(new Set()), anchor: requests(new Set()) }], dump, { redisPort: 6379, upstreamPort: 9000 });
  const round = report.rounds[0]!;

  it('puts the slowest 1% first, each with what overlapped it', () => {
    const top = round.sets.find((s) => s.name === 'slowest 1%')!;
    expect(top.count).toBe(2);
    expect(top.latencyUs).toBe(6000);
    expect(top.serverUs).toBe(5500);
    expect(top.outsideUs).toBe(500);
    expect(top.withGc).toBe(0.5);
    expect(top.gcUs).toBe(2000);
    expect(top.withTimer).toBe(0.5);
    expect(top.timerUs).toBe(1000);
    expect(top.withRedis).toBe(0.5);
    expect(top.mainWaitUs).toBe(3000);
    const [first, second] = round.slowest;
    expect([first!.gcKinds, second!.gcKinds].sort()).toEqual(['', 'minor 4.00ms']);
    expect([first!.timerLabels, second!.timerLabels].join('')).toContain('refresh');
  });

  it('ranks requests by the gateway main thread own CPU too, which waiting for the core does not inflate', () => {
    const byCpu = round.sets.find((s) => s.name === 'most main-thread CPU, top 1%')!;
    expect(byCpu.count).toBe(2);
    // Request 17 (the scavenge) first, then one of the 0.5 ms ones.
    expect(byCpu.mainRunUs).toBe(2250);
    expect(byCpu.withGc).toBe(0.5);
    expect(round.mainRun.p50Us).toBe(500);
    expect(round.mainRun.maxUs).toBe(4000);
  });

  it('counts base rates over all requests, so a cause stands out against them', () => {
    const all = round.sets.find((s) => s.name === 'all')!;
    expect(all.count).toBe(200);
    // The major GC fell between two requests: it overlaps none.
    expect(all.withGc).toBe(1 / 200);
    expect(all.withTimer).toBe(2 / 200);
    expect(all.withRedis).toBe(1 / 200);
    expect(round.paths.gateway.p50Us).toBe(1000);
    expect(round.paths.gateway.maxUs).toBe(6000);
  });

  it('sums GCs by kind and the gateway cost of them', () => {
    expect(report.gcByKind.minor).toEqual({ count: 1, totalMs: 4, maxMs: 4 });
    expect(report.gcByKind.major?.count).toBe(1);
    expect(report.gcCost.minorPer1000).toBe(5);
    expect(report.gcCost.youngBytesPerRequest).toBe(70_000);
    expect(report.gcCost.mainRunUsPerRequest).toBe((199 * 500 + 4000) / 200);
    expect(tailTable(report)).toContain('| slowest 1% | 2 | 6000 | 5500 | 500 | 50% |');
  });
});
