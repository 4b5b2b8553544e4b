import { describe, expect, it } from 'vitest';
import { parseSchedScript, threadInWindow } from './gateway-c1-sched-join.js';

const sw = (cpu: number, t: string, prev: [string, number, string], next: [string, number]): string =>
  ` ${prev[1]} [00${cpu}] ${t}:       sched:sched_switch: prev_comm=${prev[0]} prev_pid=${prev[1]} prev_prio=120 prev_state=${prev[2]} ==> next_comm=${next[0]} next_pid=${next[1]} next_prio=120`;
const waking = (cpu: number, by: number, t: string, comm: string, pid: number, target: number): string =>
  ` ${by} [00${cpu}] ${t}:       sched:sched_waking: comm=${comm} pid=${pid} prio=120 target_cpu=00${target}`;
const runtime = (cpu: number, t: string, comm: string, pid: number, ns: number): string =>
  ` ${pid} [00${cpu}] ${t}: sched:sched_stat_runtime: comm=${comm} pid=${pid} runtime=${ns} [ns]`;
const label = (tid: number, comm: string): string => (tid === 0 ? 'idle' : comm);

describe('the scheduler trace join', () => {
  it('splits a thread into running and waiting, and names who held its core while it waited', () => {
    const trace = parseSchedScript(
      [
        sw(0, '100.000000000', ['gw', 10, 'S'], ['other', 99]),
        waking(1, 20, '100.000100000', 'gw', 10, 0),
        sw(0, '100.000400000', ['other', 99, 'R'], ['gw', 10]),
        sw(0, '100.000900000', ['gw', 10, 'S'], ['swapper/0', 0]),
      ],
      new Set([10]),
    );
    const gw = threadInWindow(trace, 10, 100_000_000_000, 100_001_000_000, label);
    expect(gw.waitNs).toBe(300_000);
    expect(gw.runNs).toBe(500_000);
    expect(gw.heldBy).toEqual({ other: 300_000 });
    expect(gw.wakes).toBe(1);
  });

  it('places a switch out of idle that the trace left out at the first runtime update less that runtime', () => {
    // Core 1 went idle; the node's thread was woken from core 0, and the next line of core 1 is already
    // the node running: its switch-in is 100.000300 (runtime 50 µs counted up to 100.000350).
    const trace = parseSchedScript(
      [
        sw(1, '100.000000000', ['node', 30, 'S'], ['swapper/1', 0]),
        waking(0, 10, '100.000200000', 'node', 30, 1),
        waking(1, 30, '100.000340000', 'gw', 10, 0),
        runtime(1, '100.000350000', 'node', 30, 50_000),
        sw(1, '100.000400000', ['node', 30, 'S'], ['swapper/1', 0]),
      ],
      new Set([30]),
    );
    const node = threadInWindow(trace, 30, 100_000_000_000, 100_001_000_000, label);
    expect(node.waitNs).toBe(100_000);
    expect(node.heldBy).toEqual({ idle: 100_000 });
    expect(node.runNs).toBe(100_000);
    expect(trace.idleWakes).toEqual([{ cpu: 1, tid: 30, idleBeforeNs: 200_000, latencyNs: 100_000 }]);
  });
});
