import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LineBatch, type LineBatchTimers } from './line-batch.js';

/** Timers the test fires by hand. */
function manualTimers(): LineBatchTimers & { armed: Map<number, () => void>; fire(): void } {
  let next = 0;
  const armed = new Map<number, () => void>();
  return {
    armed,
    setTimeout: (task) => {
      armed.set(++next, task);
      return next;
    },
    clearTimeout: (handle) => void armed.delete(handle as number),
    fire() {
      for (const [id, task] of [...armed]) {
        armed.delete(id);
        task();
      }
    },
  };
}

describe('LineBatch', () => {
  it('hands lines on in order, in one text, once maxChars wait', () => {
    const out: string[] = [];
    const timers = manualTimers();
    const batch = new LineBatch((t) => out.push(t), 10, 100, timers);
    batch.write('abcd\n');
    batch.write('efg\n');
    expect(out).toEqual([]);
    batch.write('hi\n'); // 12 chars waiting
    expect(out).toEqual(['abcd\nefg\nhi\n']);
    expect(timers.armed.size).toBe(0); // the flush cancelled the delay timer
  });

  it('hands lines on when the first has waited maxDelayMs, with one timer per batch', () => {
    const out: string[] = [];
    const timers = manualTimers();
    const batch = new LineBatch((t) => out.push(t), 1000, 100, timers);
    batch.write('a\n');
    batch.write('b\n');
    expect(timers.armed.size).toBe(1);
    timers.fire();
    expect(out).toEqual(['a\nb\n']);
    batch.write('c\n');
    expect(timers.armed.size).toBe(1);
    batch.flush();
    batch.flush(); // nothing waits: nothing written
    expect(out).toEqual(['a\nb\n', 'c\n']);
    expect(timers.armed.size).toBe(0);
  });

  it('with a deferred flush, hands a due batch (by size or by age) to it instead of writing there and then; past the hard cap, writes at once', () => {
    const out: string[] = [];
    const timers = manualTimers();
    const deferred: (() => void)[] = [];
    const batch = new LineBatch((t) => out.push(t), 10, 100, timers, { defer: (flush) => deferred.push(flush), hardMaxChars: 30 });
    batch.write('aaaaa\n');
    batch.write('bbbbb\n'); // due by size: deferred once
    batch.write('c\n');
    expect(out).toEqual([]);
    expect(deferred).toHaveLength(1);
    deferred.shift()!();
    expect(out).toEqual(['aaaaa\nbbbbb\nc\n']);
    batch.write('d\n');
    timers.fire(); // due by age: deferred too
    expect(out).toHaveLength(1);
    deferred.shift()!();
    expect(out).toEqual(['aaaaa\nbbbbb\nc\n', 'd\n']);
    for (let i = 0; i < 4; i++) batch.write('eeeeeeee\n'); // 36 characters waiting: past the cap
    expect(out).toEqual(['aaaaa\nbbbbb\nc\n', 'd\n', 'eeeeeeee\n'.repeat(4)]);
    deferred.shift()?.(); // the deferred flush queued at 18 characters finds nothing left
    expect(out).toHaveLength(3);
  });

  it('the gateway logger loses no line at exit, in order (batched stderr)', () => {
    const script = `
      import { createLogger } from ${JSON.stringify(fileURLToPath(new URL('./logger.ts', import.meta.url)))};
      const logger = createLogger({ batchMs: 60_000 });
      for (let i = 0; i < 500; i++) logger.info('line', { i });
      process.exit(0);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(child.status, child.stderr).toBe(0);
    const numbers = child.stderr.trim().split('\n').map((l) => (JSON.parse(l) as { i: number }).i);
    expect(numbers).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });
});
