import { spawn } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TestBatch, TestReply, TestSessionInit } from '../../../test/support/pool-test-worker.js';
import type { PooledSession } from './pool-thread.js';
import { WorkerPool } from './worker-pool.js';

const ENTRY = new URL('../../../test/support/pool-test-worker.ts', import.meta.url);
const LINGERING_EXIT = fileURLToPath(new URL('../../../test/support/lingering-pool-exit.ts', import.meta.url));
type Session = PooledSession<{ threadId: number }, TestBatch, TestReply>;

const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

/** A pool whose threads end with their last session unless `idleGraceMs` says otherwise. */
function testPool(
  size: number,
  idleGraceMs = 0,
): { pool: WorkerPool; open: (name: string, extra?: Partial<TestSessionInit> & { group?: string }) => Promise<Session> } {
  const pool = new WorkerPool({ entry: ENTRY, size, idleGraceMs });
  pools.push(pool);
  const opens = new SharedArrayBuffer(4);
  const open = (name: string, { group, ...extra }: Partial<TestSessionInit> & { group?: string } = {}) =>
    pool.open<{ threadId: number }, TestBatch, TestReply>({ name, opens, ...extra } satisfies TestSessionInit, {
      instanceName: name,
      ...(group === undefined ? {} : { group }),
    });
  return { pool, open };
}

// Node 20 has Atomics.waitAsync; the project's TypeScript lib (es2022) does not declare it yet.
const waitAsync = (Atomics as unknown as { waitAsync(word: Int32Array, index: number, value: number): { value: Promise<string> | string } }).waitAsync;

/** Resolves once the session's thread is blocked inside a `hold` batch (no sleeps: the thread says so). */
async function held(gate: SharedArrayBuffer): Promise<void> {
  const word = new Int32Array(gate);
  while (Atomics.load(word, 0) === 0) await waitAsync(word, 0, 0).value;
}
function releaseHold(gate: SharedArrayBuffer): void {
  const word = new Int32Array(gate);
  Atomics.store(word, 0, 2);
  Atomics.notify(word, 0);
}

describe('worker pool', () => {
  it('hosts many sessions on one thread when the pool has one', async () => {
    const { pool, open } = testPool(1);
    const sessions = await Promise.all(Array.from({ length: 12 }, (_, i) => open(`m${i}_0`)));
    const replies = await Promise.all(sessions.map((s) => s.call({ op: 'echo' })));
    expect(replies.map((r) => r.session)).toEqual(sessions.map((_, i) => `m${i}_0`));
    expect(new Set(replies.map((r) => r.threadId)).size).toBe(1);
    expect(pool.stats()).toMatchObject({ threads: 1, perThread: [{ sessions: 12 }] });
  });

  it("spreads a model's instances over the threads, and ends a thread with its last session", async () => {
    const { pool, open } = testPool(2);
    const a = await open('a_0', { group: 'a/1' });
    const b = await open('a_1', { group: 'a/1' });
    expect(a.info.threadId).not.toBe(b.info.threadId);
    const c = await open('c_0', { group: 'c/1' });
    expect(pool.stats().threads).toBe(2);
    await Promise.all([a.close(), c.close()]);
    const left = pool.stats();
    expect(left.threads).toBe(1);
    expect(left.perThread[0]?.threadId).toBe(b.info.threadId);
    await b.close();
    expect(pool.stats().threads).toBe(0);
    await expect(b.call({ op: 'echo' })).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'instance a_1 is closed' });
  });

  it('takes sessions in turns: a model with a queue of batches does not hold up another one', async () => {
    const { open } = testPool(1);
    const slow = await open('slow_0');
    const fast = await open('fast_0');
    const gate = new SharedArrayBuffer(4);
    const first = slow.call({ op: 'hold', gate });
    await held(gate);
    // The thread is blocked: these all wait in its queue, the slow model's first.
    const slowMore = [1, 2, 3, 4].map(() => slow.call({ op: 'echo' }));
    const fastOne = fast.call({ op: 'echo' });
    releaseHold(gate);
    const orders = (await Promise.all([first, ...slowMore])).map((r) => r.order);
    const fastOrder = (await fastOne).order;
    // First come, first served would run it 6th; in turns it runs right after one more slow batch.
    expect(orders).toEqual([1, 2, 4, 5, 6]);
    expect(fastOrder).toBe(3);
  });

  it('a crashed thread fails only its batches in flight and opens its sessions again in a new thread', async () => {
    const { pool, open } = testPool(1);
    const a = await open('a_0');
    const b = await open('b_0');
    const c = await open('c_0');
    const before = a.info.threadId;
    const gate = new SharedArrayBuffer(4);
    const holding = b.call({ op: 'hold', gate });
    await held(gate);
    const crashing = a.call({ op: 'crash', code: 7 });
    const queued = c.call({ op: 'echo' });
    releaseHold(gate);
    await expect(holding).resolves.toMatchObject({ session: 'b_0' });
    await expect(crashing).rejects.toMatchObject({ code: 'INTERNAL', message: 'instance a_0: worker thread crashed while executing (exit code 7)' });
    await expect(queued).rejects.toMatchObject({ code: 'INTERNAL', message: 'instance c_0: worker thread crashed while executing (exit code 7)' });
    const after = await Promise.all([a, b, c].map((s) => s.call({ op: 'echo' })));
    expect(after.map((r) => r.session)).toEqual(['a_0', 'b_0', 'c_0']);
    expect(new Set(after.map((r) => r.threadId))).toEqual(new Set([after[0]?.threadId]));
    expect(after[0]?.threadId).not.toBe(before);
    expect([a, b, c].map((s) => s.restartCount)).toEqual([1, 1, 1]);
    expect(pool.stats()).toMatchObject({ threads: 1, crashes: 1 });
  });

  it('a session that cannot be opened again after a crash is failed for good; the others serve on', async () => {
    const { open } = testPool(1);
    const good = await open('good_0');
    // Opens so far: good_0, then this one (2); its restore would be the 4th open.
    const fragile = await open('fragile_0', { refuseAfterOpens: 2 });
    await expect(good.call({ op: 'crash', code: 3 })).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(good.call({ op: 'echo' })).resolves.toMatchObject({ session: 'good_0' });
    await expect(fragile.call({ op: 'echo' })).rejects.toMatchObject({
      code: 'INTERNAL',
      message: 'instance fragile_0 failed: its worker thread crashed and could not be restarted: session fragile_0 refuses to open again',
    });
    await fragile.close();
  });

  it('a failed first open rejects with the worker\'s error and leaves no session behind', async () => {
    const { pool, open } = testPool(1);
    await expect(open('broken_0', { refuseAfterOpens: 0 })).rejects.toMatchObject({ code: 'INTERNAL', message: 'session broken_0 refuses to open again' });
    expect(pool.stats().threads).toBe(0);
  });

  it('closing every session gives everything back, cycle after cycle: no thread, no session, no listener', async () => {
    const { pool, open } = testPool(2);
    const signals = Array.from({ length: 4 }, () => new AbortController().signal);
    for (let cycle = 0; cycle < 3; cycle++) {
      const sessions = await Promise.all(Array.from({ length: 10 }, (_, i) => open(`m${i}_${cycle}`, { group: `m${i}/1` })));
      expect(pool.stats().perThread.reduce((sum, t) => sum + t.sessions, 0)).toBe(10);
      await Promise.all(sessions.map((s) => s.call({ op: 'echo' }, [], { signals })));
      // A batch's cancellation listeners go with its answer: a caller's signal is not held by finished work.
      for (const signal of signals) expect(getEventListeners(signal, 'abort')).toHaveLength(0);
      await Promise.all(sessions.map((s) => s.close()));
      expect(pool.stats()).toMatchObject({ threads: 0, perThread: [] });
    }
  });

  it('an idle thread lingers through its grace: a burst of short sessions reuses it instead of starting threads', async () => {
    const { pool, open } = testPool(2, 60_000);
    const first = await open('describe_0');
    const threadId = first.info.threadId;
    await first.close();
    expect(pool.stats()).toMatchObject({ threads: 1, perThread: [{ threadId, sessions: 0 }] });
    // One at a time, then four at once, as a repository's loads describe their models.
    for (let i = 1; i < 6; i++) {
      const session = await open(`describe_${i}`);
      expect(session.info.threadId).toBe(threadId);
      await session.close();
    }
    const burst = await Promise.all([6, 7, 8, 9].map((i) => open(`describe_${i}`)));
    // The idle thread is taken first; the pool's second thread only for what overlaps with it.
    expect(burst[0]?.info.threadId).toBe(threadId);
    await Promise.all(burst.map((s) => s.close()));
    expect(pool.stats().started).toBe(2);
  });

  it('a lingering thread ends once its grace has passed with no session; a session in the grace keeps it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const grace = 5_000;
      const { pool, open } = testPool(1, grace);
      const a = await open('a_0');
      await a.close();
      vi.advanceTimersByTime(grace - 1);
      expect(pool.stats().threads).toBe(1);
      // A session opened in the grace cancels it: the thread hosts it past the old deadline.
      const b = await open('b_0');
      expect(b.info.threadId).toBe(a.info.threadId);
      vi.advanceTimersByTime(grace * 2);
      expect(pool.stats()).toMatchObject({ threads: 1, perThread: [{ sessions: 1 }] });
      await b.close();
      vi.advanceTimersByTime(grace - 1);
      expect(pool.stats().threads).toBe(1);
      vi.advanceTimersByTime(1);
      // Unloading everything leaves no thread behind once the grace is over.
      expect(pool.stats()).toMatchObject({ threads: 0, perThread: [], started: 1 });
      const c = await open('c_0');
      expect(c.info.threadId).not.toBe(a.info.threadId);
      expect(pool.stats().started).toBe(2);
      await c.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a thread taken from its grace crashes like any other; its replacement lingers in turn', async () => {
    const { pool, open } = testPool(1, 60_000);
    const a = await open('a_0');
    await a.close();
    const crasher = await open('crasher_0');
    expect(crasher.info.threadId).toBe(a.info.threadId);
    await expect(crasher.call({ op: 'crash', code: 9 })).rejects.toMatchObject({ code: 'INTERNAL' });
    await expect(crasher.call({ op: 'echo' })).resolves.toMatchObject({ session: 'crasher_0' });
    const replacement = crasher.info.threadId;
    expect(replacement).not.toBe(a.info.threadId);
    await crasher.close();
    expect(pool.stats()).toMatchObject({ threads: 1, crashes: 1, perThread: [{ threadId: replacement, sessions: 0 }] });
    const b = await open('b_0');
    await expect(b.call({ op: 'echo' })).resolves.toMatchObject({ session: 'b_0', threadId: replacement });
    await b.close();
  });

  it('a lingering thread does not keep the process alive: a process with nothing else to do ends in its grace', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', LINGERING_EXIT], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    // It reports the idle thread, still there, and ends anyway (with a ref'd thread it would wait 10 minutes).
    expect({ code, out, err }).toEqual({ code: 0, out: '1\n', err: '' });
  }, 60_000);
});
