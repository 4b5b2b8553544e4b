import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { batcherOptions } from './batcher-options.js';
import type { DynamicBatcherOptions, QueuePolicy } from './batcher-options.js';
import { BatcherCounters } from './batcher-observer.js';
import { DynamicBatcher } from './dynamic-batcher.js';
import { FakeClock, flushPromises } from './fake-clock.js';
import type { InstanceGate } from './instance-gate.js';
import { FakeInstance, req, track } from '../../../test/support/batcher-test-support.js';

type Opts = Parameters<typeof batcherOptions>[0];

function setup(opts: Opts, instanceCount = 1, extra: { gate?: (wake: () => void) => InstanceGate } = {}) {
  const clock = new FakeClock();
  const instances = Array.from({ length: instanceCount }, () => new FakeInstance());
  const counters = new BatcherCounters();
  const options: DynamicBatcherOptions = batcherOptions(opts);
  const batcher = new DynamicBatcher({ options, instances, clock, observer: counters, ...extra });
  return { clock, instances, inst: instances[0]!, counters, batcher };
}

const policy = (p: Partial<QueuePolicy>): QueuePolicy => ({
  timeoutAction: 'REJECT',
  defaultTimeoutUs: 0,
  allowTimeoutOverride: false,
  maxQueueSize: 0,
  ...p,
});

describe('DynamicBatcher: queue delay from idle (queue_delay_from_idle)', () => {
  // A closed loop's two cohorts: 'a' arrives while the instance runs another batch and outwaits the
  // delay there; the answered cohort ('x', 'y', 'z') comes back just after the instance frees up.
  async function cohorts(queueDelayFromIdle: boolean) {
    const { clock, inst, batcher } = setup({ maxBatchSize: 8, preferredBatchSizes: [4], maxQueueDelayUs: 1000, queueDelayFromIdle });
    for (const id of ['p', 'q', 'r', 's']) batcher.enqueue(req(id));
    await flushPromises();
    batcher.enqueue(req('a'));
    await clock.advance(5000);
    inst.complete();
    await flushPromises();
    await clock.advance(300);
    for (const id of ['x', 'y', 'z']) batcher.enqueue(req(id));
    await flushPromises();
    return inst.batches;
  }

  it('off (Triton): the request that outwaited the delay while the instance was busy leaves alone', async () => {
    expect(await cohorts(false)).toEqual([['p', 'q', 'r', 's'], ['a']]);
  });

  it('on: it waits up to the delay from the instance freeing up, and the returning cohort joins it', async () => {
    expect(await cohorts(true)).toEqual([['p', 'q', 'r', 's'], ['a', 'x', 'y', 'z']]);
  });

  it('on: without company it still leaves once the delay from the instance freeing up has passed', async () => {
    const { clock, inst, batcher } = setup({ maxBatchSize: 8, preferredBatchSizes: [4], maxQueueDelayUs: 1000, queueDelayFromIdle: true });
    for (const id of ['p', 'q', 'r', 's']) batcher.enqueue(req(id));
    await flushPromises();
    batcher.enqueue(req('a'));
    await clock.advance(5000);
    inst.complete();
    await flushPromises();
    await clock.advance(999);
    expect(inst.batches).toHaveLength(1);
    await clock.advance(1);
    expect(inst.batches[1]).toEqual(['a']);
  });
});

describe('DynamicBatcher: batch formation', () => {
  it('runs the largest preferred size reachable now and holds the rest for the queue delay', async () => {
    const { clock, inst, batcher } = setup({ maxBatchSize: 8, preferredBatchSizes: [2, 4], maxQueueDelayUs: 1000 });
    const results = ['a', 'b', 'c', 'd', 'e'].map((id) => track(batcher.enqueue(req(id))));
    await flushPromises();
    expect(inst.batches).toEqual([['a', 'b', 'c', 'd']]);
    inst.complete();
    await flushPromises();
    expect(results.map((r) => r.value)).toEqual(['out:a', 'out:b', 'out:c', 'out:d', undefined]);
    await clock.advance(999);
    expect(inst.batches).toHaveLength(1);
    await clock.advance(1);
    expect(inst.batches[1]).toEqual(['e']);
  });

  it('sends a partial batch when the queue delay expires', async () => {
    const { clock, inst, batcher } = setup({ maxBatchSize: 8, maxQueueDelayUs: 500 });
    batcher.enqueue(req('a'));
    await clock.advance(200);
    batcher.enqueue(req('b'));
    batcher.enqueue(req('c'));
    await clock.advance(299);
    expect(inst.batches).toEqual([]);
    await clock.advance(1);
    expect(inst.batches).toEqual([['a', 'b', 'c']]);
  });

  it('sends at once when max_batch_size is reached, even before the delay', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 4, maxQueueDelayUs: 1_000_000 });
    for (const id of ['a', 'b', 'c', 'd', 'e']) batcher.enqueue(req(id));
    await flushPromises();
    expect(inst.batches).toEqual([['a', 'b', 'c', 'd']]);
  });

  it('grows past the preferred size (up to max_batch_size) only once the delay has expired', async () => {
    const { clock, inst, batcher } = setup({ maxBatchSize: 8, preferredBatchSizes: [2], maxQueueDelayUs: 100 });
    for (const id of ['a', 'b']) batcher.enqueue(req(id));
    await flushPromises();
    expect(inst.batches).toEqual([['a', 'b']]);
    // While the instance is busy, requests pile up and the delay of the oldest expires.
    for (const id of ['c', 'd', 'e', 'f', 'g']) batcher.enqueue(req(id));
    await clock.advance(100);
    inst.complete();
    await flushPromises();
    expect(inst.batches[1]).toEqual(['c', 'd', 'e', 'f', 'g']);
  });

  it('with delay 0, takes as much as fits whenever an instance is free', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 4 });
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) batcher.enqueue(req(id));
    await flushPromises();
    expect(inst.batches).toEqual([['a', 'b', 'c', 'd']]);
    batcher.enqueue(req('g'));
    inst.complete();
    await flushPromises();
    expect(inst.batches[1]).toEqual(['e', 'f', 'g']);
  });

  it('counts batch elements, not requests, against max_batch_size', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 8 });
    batcher.enqueue(req('a', { batchSize: 5 }));
    batcher.enqueue(req('b', { batchSize: 4 }));
    batcher.enqueue(req('c', { batchSize: 3 }));
    await flushPromises();
    expect(inst.batches).toEqual([['a']]);
    inst.complete();
    await flushPromises();
    expect(inst.batches[1]).toEqual(['b', 'c']);
  });

  it('batches only requests with equal shapes beyond the batch dimension, in arrival order', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 8 });
    batcher.enqueue(req('a', { dims: [4] }));
    batcher.enqueue(req('b', { dims: [4] }));
    batcher.enqueue(req('c', { dims: [5] }));
    batcher.enqueue(req('d', { dims: [4] }));
    await flushPromises();
    inst.complete();
    await flushPromises();
    inst.complete();
    await flushPromises();
    expect(inst.batches).toEqual([['a', 'b'], ['c'], ['d']]);
  });

  it('mixes shapes of inputs that allow ragged batches', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 8, raggedInputs: new Set(['x']) });
    batcher.enqueue(req('a', { dims: [4] }));
    batcher.enqueue(req('b', { dims: [7] }));
    await flushPromises();
    expect(inst.batches).toEqual([['a', 'b']]);
  });

  it('runs one request per batch for a model with max_batch_size 0', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 0 });
    batcher.enqueue(req('a'));
    batcher.enqueue(req('b'));
    await flushPromises();
    expect(inst.batches).toEqual([['a']]);
  });
});

describe('DynamicBatcher: instances', () => {
  it('runs two batches at once on two instances', async () => {
    const { instances, batcher } = setup({ maxBatchSize: 2 }, 2);
    for (const id of ['a', 'b', 'c', 'd', 'e']) batcher.enqueue(req(id));
    await flushPromises();
    expect(instances.map((i) => i.batches)).toEqual([[['a', 'b']], [['c', 'd']]]);
    expect(instances.map((i) => i.running)).toEqual([1, 1]);
    expect(batcher.inflight()).toBe(4);
    expect(batcher.queued()).toBe(1);
    instances[1]!.complete();
    await flushPromises();
    expect(instances[1]!.batches[1]).toEqual(['e']);
  });

  it('forms nothing while every instance is busy, so the next batch takes the whole backlog', async () => {
    const { clock, inst, batcher } = setup({ maxBatchSize: 8, maxQueueDelayUs: 10 });
    batcher.enqueue(req('a'));
    await clock.advance(10);
    for (const id of ['b', 'c', 'd']) batcher.enqueue(req(id));
    await clock.advance(1000);
    expect(inst.batches).toEqual([['a']]);
    inst.complete();
    await flushPromises();
    expect(inst.batches[1]).toEqual(['b', 'c', 'd']);
  });

  it('rejects every request of a failed execution and keeps serving', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 2 });
    const a = track(batcher.enqueue(req('a')));
    const b = track(batcher.enqueue(req('b')));
    const c = track(batcher.enqueue(req('c')));
    await flushPromises();
    inst.fail(TesseraError.internal('boom'));
    await flushPromises();
    expect([a.status, b.status]).toEqual(['rejected', 'rejected']);
    expect((a.error as TesseraError).message).toBe('boom');
    inst.completeShort();
    await flushPromises();
    expect((c.error as TesseraError).code).toBe('INTERNAL');
  });
});

describe('DynamicBatcher: priorities and queue policies', () => {
  it('serves higher priority levels first', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 8, priorityLevels: 3, defaultPriorityLevel: 2 });
    batcher.enqueue(req('busy'));
    await flushPromises();
    batcher.enqueue(req('p3', { priority: 3 }));
    batcher.enqueue(req('p0', { priority: 0 }));
    batcher.enqueue(req('p1', { priority: 1 }));
    batcher.enqueue(req('p9', { priority: 9 }));
    inst.complete();
    await flushPromises();
    expect(inst.batches[1]).toEqual(['p1', 'p0', 'p9', 'p3']);
  });

  it('REJECT answers an expired request with UNAVAILABLE "Request timeout expired" while it waits', async () => {
    const { clock, inst, counters, batcher } = setup({
      maxBatchSize: 8,
      defaultQueuePolicy: { defaultTimeoutUs: 100, allowTimeoutOverride: true },
    });
    batcher.enqueue(req('busy'));
    await flushPromises();
    const short = track(batcher.enqueue(req('short', { timeoutUs: 30 })));
    const long = track(batcher.enqueue(req('long')));
    await clock.advance(30);
    expect(short.status).toBe('rejected');
    expect(short.error).toMatchObject({ code: 'UNAVAILABLE', message: 'Request timeout expired' });
    expect(long.status).toBe('pending');
    await clock.advance(70);
    expect(long.status).toBe('rejected');
    expect(counters.rejected).toBe(2);
    inst.complete();
    await flushPromises();
    expect(inst.batches).toEqual([['busy']]);
  });

  it('DELAY keeps an expired request, behind the unexpired ones of its level and ahead of the next level', async () => {
    const { clock, inst, batcher } = setup({
      maxBatchSize: 8,
      priorityLevels: 2,
      defaultPriorityLevel: 2,
      priorityQueuePolicy: new Map([[1, policy({ timeoutAction: 'DELAY', defaultTimeoutUs: 100 })]]),
    });
    batcher.enqueue(req('busy'));
    await flushPromises();
    const late = track(batcher.enqueue(req('late', { priority: 1 })));
    batcher.enqueue(req('low', { priority: 2 }));
    await clock.advance(100);
    batcher.enqueue(req('fresh', { priority: 1 }));
    inst.complete();
    await flushPromises();
    expect(inst.batches[1]).toEqual(['fresh', 'late', 'low']);
    inst.complete();
    await flushPromises();
    expect(late.value).toBe('out:late');
  });

  it('a per-request timeout is ignored when the default timeout is 0', async () => {
    const { clock, inst, batcher } = setup({ maxBatchSize: 8, defaultQueuePolicy: { allowTimeoutOverride: true } });
    batcher.enqueue(req('busy'));
    await flushPromises();
    const r = track(batcher.enqueue(req('r', { timeoutUs: 10 })));
    await clock.advance(1_000_000);
    expect(r.status).toBe('pending');
    inst.complete();
    await flushPromises();
    expect(inst.batches[1]).toEqual(['r']);
  });

  it('rejects synchronously when the level holds max_queue_size requests', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 8, defaultQueuePolicy: { maxQueueSize: 2 } });
    batcher.enqueue(req('busy'));
    await flushPromises();
    batcher.enqueue(req('a'));
    batcher.enqueue(req('b'));
    const full = track(batcher.enqueue(req('c')));
    const anonymous = track(batcher.enqueue(req('')));
    await Promise.resolve();
    expect(full.error).toMatchObject({ code: 'UNAVAILABLE', message: '[request id: c] Exceeds maximum queue size' });
    expect(anonymous.error).toMatchObject({ message: 'Exceeds maximum queue size' });
    // Requests in a running batch do not count.
    inst.complete();
    await flushPromises();
    expect(track(batcher.enqueue(req('d'))).status).toBe('pending');
  });
});

describe('DynamicBatcher: cancellation', () => {
  it('a request cancelled while queued leaves the queue and never runs', async () => {
    const { inst, counters, batcher } = setup({ maxBatchSize: 8 });
    batcher.enqueue(req('busy'));
    await flushPromises();
    const ac = new AbortController();
    const r = track(batcher.enqueue(req('r', { signal: ac.signal })));
    batcher.enqueue(req('s'));
    ac.abort();
    await flushPromises();
    expect(r.error).toMatchObject({ code: 'CANCELLED' });
    expect(batcher.queued()).toBe(1);
    inst.complete();
    await flushPromises();
    expect(inst.batches).toEqual([['busy'], ['s']]);
    expect(counters.cancelled).toBe(1);
  });

  it('a request whose deadline aborted it is answered DEADLINE_EXCEEDED, and counted cancelled like the others', async () => {
    const { inst, counters, batcher } = setup({ maxBatchSize: 8 });
    batcher.enqueue(req('busy'));
    await flushPromises();
    const ac = new AbortController();
    const queued = track(batcher.enqueue(req('q', { signal: ac.signal })));
    ac.abort(TesseraError.deadlineExceeded('the request deadline passed'));
    await flushPromises();
    expect(queued.error).toMatchObject({ code: 'DEADLINE_EXCEEDED', message: 'the request deadline passed' });
    // Any other reason (a disconnect, a plain abort()) stays a cancellation.
    const other = track(batcher.enqueue(req('o', { signal: AbortSignal.abort(new Error('gone')) })));
    await flushPromises();
    expect(other.error).toMatchObject({ code: 'CANCELLED' });
    inst.complete();
    await flushPromises();
    expect(inst.batches).toEqual([['busy']]);
    expect(counters.cancelled).toBe(2);
  });

  it('a request already cancelled is never queued for execution', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 8 });
    const r = track(batcher.enqueue(req('r', { signal: AbortSignal.abort() })));
    await flushPromises();
    expect(r.status).toBe('rejected');
    expect(inst.batches).toEqual([]);
  });

  it('a request cancelled while its batch runs is answered CANCELLED at once; the others still get results', async () => {
    const { inst, counters, batcher } = setup({ maxBatchSize: 8 });
    const ac = new AbortController();
    const a = track(batcher.enqueue(req('a', { signal: ac.signal })));
    const b = track(batcher.enqueue(req('b')));
    await flushPromises();
    ac.abort();
    await flushPromises();
    expect(a.error).toMatchObject({ code: 'CANCELLED' });
    expect(b.status).toBe('pending');
    inst.complete();
    await flushPromises();
    expect(b.value).toBe('out:b');
    expect(a.value).toBeUndefined();
    expect(counters.cancelled).toBe(1);
  });
});

describe('DynamicBatcher: preserve_ordering', () => {
  async function run(preserveOrdering: boolean): Promise<string[]> {
    const { instances, batcher } = setup({ maxBatchSize: 2, preserveOrdering }, 2);
    const order: string[] = [];
    for (const id of ['a', 'b', 'c']) void batcher.enqueue(req(id)).then((v) => order.push(v));
    await flushPromises();
    instances[1]!.complete();
    await flushPromises();
    const early = [...order];
    instances[0]!.complete();
    await flushPromises();
    return [...early, '|', ...order.slice(early.length)];
  }

  it('releases responses in the order requests were scheduled', async () => {
    expect(await run(true)).toEqual(['|', 'out:a', 'out:b', 'out:c']);
  });

  it('without it, responses leave as batches finish', async () => {
    expect(await run(false)).toEqual(['out:c', '|', 'out:a', 'out:b']);
  });

  it('a cancelled request does not hold back the responses behind it', async () => {
    const { instances, batcher } = setup({ maxBatchSize: 1, preserveOrdering: true }, 2);
    const ac = new AbortController();
    const a = track(batcher.enqueue(req('a', { signal: ac.signal })));
    const b = track(batcher.enqueue(req('b')));
    await flushPromises();
    instances[1]!.complete();
    await flushPromises();
    expect(b.status).toBe('pending');
    ac.abort();
    await flushPromises();
    expect([a.status, b.value]).toEqual(['rejected', 'out:b']);
  });
});

describe('DynamicBatcher: lifecycle, metrics and rate-limit seam', () => {
  it('stop() refuses new requests, lets queued ones run, and resolves when drained', async () => {
    const { inst, batcher } = setup({ maxBatchSize: 1 });
    batcher.enqueue(req('a'));
    batcher.enqueue(req('b'));
    await flushPromises();
    const stopped = track(batcher.stop());
    const late = track(batcher.enqueue(req('late')));
    await flushPromises();
    expect(late.error).toMatchObject({
      code: 'UNAVAILABLE',
      message: 'Server is stopping, scheduler for model has stopped accepting new inference requests',
    });
    inst.complete();
    await flushPromises();
    expect(stopped.status).toBe('pending');
    inst.complete();
    await flushPromises();
    expect(stopped.status).toBe('resolved');
    expect(inst.batches).toEqual([['a'], ['b']]);
  });

  it('reports queue time, pending count, executions and the batch-size histogram', async () => {
    const { clock, inst, counters, batcher } = setup({ maxBatchSize: 4, maxQueueDelayUs: 50 });
    for (const id of ['a', 'b', 'c']) batcher.enqueue(req(id));
    await flushPromises();
    expect(counters.pending).toBe(3);
    await clock.advance(50);
    expect(counters.pending).toBe(0);
    expect(counters.queueUsTotal).toBe(150);
    batcher.enqueue(req('d'));
    inst.complete();
    await clock.advance(50);
    expect(counters.executions).toBe(2);
    expect([...counters.batchSizes]).toEqual([
      [3, 1],
      [1, 1],
    ]);
  });

  it('asks the gate before starting a batch and waits for its wake-up when refused', async () => {
    let open = false;
    let wake = (): void => {};
    let withdrawn = 0;
    const released: number[] = [];
    const { instances, batcher } = setup({ maxBatchSize: 8 }, 2, {
      gate: (w) => {
        wake = w;
        return {
          tryAcquire: (idle) => (open ? { instance: idle[idle.length - 1]!, release: () => released.push(1) } : undefined),
          withdraw: () => {
            withdrawn += 1;
          },
        };
      },
    });
    batcher.enqueue(req('a'));
    await flushPromises();
    batcher.enqueue(req('b'));
    await flushPromises();
    expect(instances.map((i) => i.batches)).toEqual([[], []]);
    expect(withdrawn).toBe(0); // still staged: a batch is ready
    open = true;
    wake();
    // The gate chose instance 1; the batch grew while it waited for the grant.
    expect(instances.map((i) => i.batches)).toEqual([[], [['a', 'b']]]);
    expect(withdrawn).toBe(1); // nothing left to run
    instances[1]!.complete();
    await flushPromises();
    expect(released).toEqual([1]);
  });
});
