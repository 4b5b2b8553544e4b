import { describe, expect, it } from 'vitest';
import { countSyscalls, deltaByRole, nodeThreadRoles, parseSchedstat, syscallsPerUnit } from './gateway-wake-threads.js';

describe('gateway-wake-account parsing', () => {
  it('reads CPU, runqueue wait and timeslices from schedstat and both context-switch counts from status', () => {
    const t = parseSchedstat(7, '123456789 2000 42\n', 'Name:\tnode\nvoluntary_ctxt_switches:\t31\nnonvoluntary_ctxt_switches:\t5\n');
    expect(t).toEqual({ tid: 7, runNs: 123456789, waitNs: 2000, slices: 42, voluntary: 31, nonvoluntary: 5 });
  });

  it("names a Node process's threads by creation rank, the pid as main, later ones as other", () => {
    const roles = nodeThreadRoles(100, [112, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110]);
    expect(roles.get(100)).toBe('main');
    expect(roles.get(101)).toBe('V8 delayed tasks');
    expect(roles.get(105)).toBe('V8 worker');
    expect(roles.get(106)).toBe('inspector signal');
    expect(roles.get(110)).toBe('libuv pool');
    expect(roles.get(112)).toBe('other');
  });

  it('sums deltas by role, counting a thread born in the window from zero', () => {
    const t = (tid: number, runNs: number, slices: number) => ({ tid, runNs, waitNs: 0, slices, voluntary: slices, nonvoluntary: 0 });
    const d = deltaByRole([t(1, 1000, 1), t(2, 0, 0)], [t(1, 5000, 3), t(2, 2000, 2), t(3, 1000, 1)], (tid) => (tid === 1 ? 'main' : 'pool'));
    expect(d.main).toEqual({ threads: 1, cpuUs: 4, waitUs: 0, slices: 2, voluntary: 2, nonvoluntary: 0 });
    expect(d.pool).toEqual({ threads: 2, cpuUs: 3, waitUs: 0, slices: 3, voluntary: 3, nonvoluntary: 0 });
  });

  it('counts strace -f calls once each (an unfinished call is not counted again when it resumes), by thread', () => {
    const text = [
      '100 epoll_pwait(13, [{events=EPOLLIN, data={u32=16, u64=16}}], 1024, 0, NULL, 8) = 1',
      '100 read(16, "x", 65536) = 1',
      '101 futex(0x1, FUTEX_WAIT_PRIVATE, 0, NULL <unfinished ...>',
      '100 writev(16, [{iov_base="y", iov_len=1}], 1) = 1',
      '101 <... futex resumed>) = 0',
      '100 epoll_pwait(13,  <unfinished ...>',
      '100 <... epoll_pwait resumed>[], 1024, 10, NULL, 8) = 0',
      '101 +++ exited with 0 +++',
    ].join('\n');
    const counts = countSyscalls(text);
    expect(Object.fromEntries(counts.get(100)!)).toEqual({ epoll_pwait: 2, read: 1, writev: 1 });
    expect(Object.fromEntries(counts.get(101)!)).toEqual({ futex: 1 });
    expect(syscallsPerUnit(counts, (tid) => (tid === 100 ? 'main' : 'helper'), 2)).toEqual({ main: { epoll_pwait: 1, read: 0.5, writev: 0.5 }, helper: { futex: 0.5 } });
  });
});
