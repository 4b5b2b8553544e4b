/**
 * A pooled worker module for worker-pool.test.ts: sessions that echo, block the thread until a gate in
 * shared memory opens (as session.run blocks it), crash the thread, or fail to open again after a crash.
 * Every reply says which thread ran it and in which order the thread ran its batches.
 */
import { threadId } from 'node:worker_threads';
import { serveSessions } from '../../src/backends/worker/session-host.js';

export interface TestSessionInit {
  readonly name: string;
  /** Word 0: opens of sessions of this test, all threads together (restores included). */
  readonly opens: SharedArrayBuffer;
  /** Refuse to open once `opens` has reached this (a session that cannot be restored). */
  readonly refuseAfterOpens?: number;
}

export type TestBatch =
  | { readonly op: 'echo' }
  /** Sets word 0 of `gate` to 1 (inside), then blocks the thread until the test stores 2 there. */
  | { readonly op: 'hold'; readonly gate: SharedArrayBuffer }
  | { readonly op: 'crash'; readonly code: number };

export interface TestReply {
  readonly session: string;
  readonly threadId: number;
  /** 1 for the first batch this thread ran, 2 for the next, ... */
  readonly order: number;
}

let executed = 0;

serveSessions<TestSessionInit, { threadId: number }, TestBatch, TestReply>({
  open(init) {
    const opens = new Int32Array(init.opens);
    const count = Atomics.add(opens, 0, 1) + 1;
    if (init.refuseAfterOpens !== undefined && count > init.refuseAfterOpens) {
      return Promise.reject(new Error(`session ${init.name} refuses to open again`));
    }
    return Promise.resolve({
      info: { threadId },
      session: {
        execute(batch) {
          if (batch.op === 'crash') process.exit(batch.code);
          if (batch.op === 'hold') {
            const word = new Int32Array(batch.gate);
            Atomics.store(word, 0, 1);
            Atomics.notify(word, 0);
            while (Atomics.load(word, 0) !== 2) Atomics.wait(word, 0, 1);
          }
          executed++;
          return Promise.resolve({ body: { session: init.name, threadId, order: executed }, transfer: [] });
        },
        close: () => Promise.resolve(),
      },
    });
  },
});
