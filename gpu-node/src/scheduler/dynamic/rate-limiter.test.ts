import { describe, expect, it } from 'vitest';
import { batcherOptions } from './batcher-options.js';
import { DynamicBatcher } from './dynamic-batcher.js';
import { FakeClock, flushPromises } from './fake-clock.js';
import { RateLimiter } from './rate-limiter.js';
import type { RateLimitedInstance } from './rate-limiter.js';
import { FakeInstance, req } from '../../../test/support/batcher-test-support.js';

function model(limiter: RateLimiter, specs: RateLimitedInstance[]) {
  const instances = specs.map(() => new FakeInstance());
  const gate = limiter.register(specs);
  const batcher = new DynamicBatcher({
    options: batcherOptions({ maxBatchSize: 1 }),
    instances,
    clock: new FakeClock(),
    gate,
  });
  return { instances, batcher, gate };
}

const gpu = (count: number, priority = 1): RateLimitedInstance => ({
  resources: [{ name: 'R', global: false, count }],
  priority,
  device: 0,
});

describe('RateLimiter', () => {
  it('runs no more executions at once than the resource allows', async () => {
    const limiter = new RateLimiter();
    const a = model(limiter, [gpu(2), gpu(2)]);
    for (const id of ['a1', 'a2', 'a3']) void a.batcher.enqueue(req(id));
    await flushPromises();
    expect(a.instances.map((i) => i.running)).toEqual([1, 0]);
    a.instances[0]!.complete();
    await flushPromises();
    expect(a.instances.map((i) => i.running).reduce((x, y) => x + y)).toBe(1);
  });

  it('lets two executions share a pool when it is big enough, and honours overrides', async () => {
    const limiter = new RateLimiter([{ name: 'r', count: 4 }]);
    const a = model(limiter, [gpu(2), gpu(2)]);
    for (const id of ['a1', 'a2']) void a.batcher.enqueue(req(id));
    await flushPromises();
    expect(a.instances.map((i) => i.running)).toEqual([1, 1]);
    expect(limiter.capacity({ name: 'R', global: false, count: 2 }, 0)).toBe(4);
  });

  it('shares a resource across models, favouring the lower exec_count × priority', async () => {
    const limiter = new RateLimiter();
    const hi = model(limiter, [gpu(1, 1)]);
    const lo = model(limiter, [gpu(1, 2)]);
    const order: string[] = [];
    const run = (m: { instances: FakeInstance[] }, name: string) => {
      m.instances[0]!.complete();
      order.push(name);
    };
    for (let i = 0; i < 6; i++) {
      void hi.batcher.enqueue(req(`h${i}`));
      void lo.batcher.enqueue(req(`l${i}`));
    }
    await flushPromises();
    for (let step = 0; step < 9; step++) {
      const m = hi.instances[0]!.running > 0 ? hi : lo;
      expect(hi.instances[0]!.running + lo.instances[0]!.running).toBe(1);
      run(m, m === hi ? 'h' : 'l');
      await flushPromises();
    }
    // Priority 2 gets about half the turns of priority 1.
    expect(order.filter((x) => x === 'h').length).toBe(6);
    expect(order.filter((x) => x === 'l').length).toBe(3);
  });

  it('unregister() forgets a model: it no longer holds the head of the line nor sizes the pools', async () => {
    const limiter = new RateLimiter([{ name: 'R', count: 4 }]);
    const a = model(limiter, [gpu(4)]); // needs the whole pool
    const b = model(limiter, [gpu(2), gpu(2)]);
    void b.batcher.enqueue(req('b1'));
    await flushPromises();
    void a.batcher.enqueue(req('a1')); // staged first, needs 4 of the 2 left: blocks the line
    await flushPromises();
    void b.batcher.enqueue(req('b2'));
    await flushPromises();
    expect(b.instances.map((i) => i.running)).toEqual([1, 0]);

    // What the scheduler's stop does once the model drained; here `a` is cut off while staged, to show
    // that the one blocking the line goes with it.
    limiter.unregister(a.gate);
    await flushPromises();
    expect(b.instances.map((i) => i.running)).toEqual([1, 1]);
    expect(limiter.size).toBe(1);
    limiter.unregister(a.gate); // twice is harmless
    expect(limiter.size).toBe(1);

    // Without an override, a pool is as large as the largest declaration still registered.
    const sizing = new RateLimiter();
    const large = model(sizing, [gpu(4)]);
    model(sizing, [gpu(2)]);
    expect(sizing.capacity({ name: 'R', global: false, count: 1 }, 0)).toBe(4);
    sizing.unregister(large.gate);
    expect(sizing.capacity({ name: 'R', global: false, count: 1 }, 0)).toBe(2);
  });
});
