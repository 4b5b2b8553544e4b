/**
 * The core's statistics fed by the schedulers' queue events, its load snapshot for load reports, and
 * the rate limiter's registrations, over the fake backend (executions held at a gate, no sleeps).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TesseraError } from '../../../shared/src/errors/index.js';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { fakeConfig, int32Input } from '../../test/support/models/test-repository.js';
import { RateLimiter } from '../scheduler/dynamic/rate-limiter.js';
import type { NodeCoreOptions } from './node-core-impl.js';
import { startTestCore, type TestCore } from '../../test/support/test-core.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function node(config: string, options: Partial<NodeCoreOptions> = {}): Promise<TestCore> {
  return startTestCore(cleanups, (repo) => repo.addModel('m', config, [1]), options);
}

function request(batch = 1): InferRequest {
  return { id: 'r', modelName: 'm', inputs: [int32Input('IN', new Array(4 * batch).fill(7), [batch, 4])], parameters: {} };
}

/** One queued request at most, rejected after 30 ms in the queue. */
// Long enough that a busy machine cannot let the timeout pass between two calls meant to see the slot taken.
const QUEUE_POLICY = `dynamic_batching {
  default_queue_policy { timeout_action: REJECT default_timeout_microseconds: 500000 max_queue_size: 1 }
}`;

describe('statistics from the queue events', () => {
  it('counts queue timeouts REJECTED and cancellations CANCELED, not queue-full refusals; pending follows the queue', async () => {
    const { core, backend } = await node(fakeConfig(QUEUE_POLICY));
    backend.gate = true;
    const first = core.infer(request(2));
    await backend.waitForHeld(1);

    const timesOut = core.infer(request());
    // Synchronously after: the one queue slot is still taken, so this one is refused at enqueue.
    await expect(core.infer(request())).rejects.toMatchObject({ code: 'UNAVAILABLE', message: '[request id: r] Exceeds maximum queue size' });
    expect(core.statsSnapshots()[0]?.pendingRequests).toBe(1);
    await expect(timesOut).rejects.toMatchObject({ code: 'UNAVAILABLE', message: 'Request timeout expired' });
    expect(core.statsSnapshots()[0]?.pendingRequests).toBe(0);

    const controller = new AbortController();
    const cancelled = core.infer(request(), { signal: controller.signal });
    controller.abort();
    await expect(cancelled).rejects.toMatchObject({ code: 'CANCELLED' });

    backend.releaseAll();
    await first;
    expect(backend.executed).toHaveLength(1);
    const [snapshot] = core.statsSnapshots();
    expect(snapshot).toMatchObject({
      requestSuccess: 1,
      requestFailure: { REJECTED: 1, CANCELED: 1, BACKEND: 0, OTHER: 0 },
      executionCount: 1,
      inferenceCount: 2,
      pendingRequests: 0,
      batchSizes: [{ batchSize: 2, executions: 1 }],
    });
    const [stats] = core.statistics('m');
    expect(stats?.inference_stats.fail.count).toBe(2);
    expect(stats?.inference_stats.queue.count).toBe(1);
    expect(stats?.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([[2, 1]]);
  });

  it('a backend that throws UNAVAILABLE is a BACKEND failure, not a rejection', async () => {
    const { core, backend } = await node(fakeConfig('dynamic_batching { }'));
    backend.gate = true;
    const failing = core.infer(request());
    await backend.waitForHeld(1);
    backend.held.shift()?.fail(TesseraError.unavailable('instance m_0 was closed'));
    await expect(failing).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(core.statsSnapshots()[0]?.requestFailure).toEqual({ REJECTED: 0, CANCELED: 0, BACKEND: 1, OTHER: 0 });
  });

  it('the default scheduler reports pending and cancellations the same way', async () => {
    const { core, backend } = await node(fakeConfig());
    backend.gate = true;
    const first = core.infer(request());
    await backend.waitForHeld(1);
    const controller = new AbortController();
    const queued = core.infer(request(), { signal: controller.signal });
    expect(core.statsSnapshots()[0]?.pendingRequests).toBe(1);
    controller.abort();
    await expect(queued).rejects.toMatchObject({ code: 'CANCELLED' });
    await expect(core.infer(request(), { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'CANCELLED' });
    backend.releaseAll();
    await first;
    expect(core.statsSnapshots()[0]).toMatchObject({ pendingRequests: 0, requestFailure: { CANCELED: 2 } });
  });
});

describe('load snapshot', () => {
  it('reports READY versions, queue, in-flight, capacity and the execution-time EMA per model', async () => {
    const { core, backend } = await node(fakeConfig('instance_group [ { kind: KIND_CPU count: 3 } ]\ndynamic_batching { }'));
    expect(core.loadSnapshot()).toEqual([
      { name: 'm', versions: ['1'], queued: 0, inflight: 0, capacity: 3 * 8, execTimeEmaMs: null },
    ]);
    backend.gate = true;
    // One at a time, so that each idle instance takes one (together they would form one batch).
    const running: Promise<unknown>[] = [];
    for (let i = 1; i <= 3; i++) {
      running.push(core.infer(request()));
      await backend.waitForHeld(i);
    }
    const queued = core.infer(request());
    await backend.until(() => core.loadSnapshot()[0]?.queued === 1);
    expect(core.loadSnapshot()[0]).toMatchObject({ queued: 1, inflight: 3 });
    backend.gate = false;
    backend.releaseAll();
    await Promise.all([...running, queued]);
    // The fake backend reports 1 + 5 + 2 µs of compute per execution.
    expect(core.loadSnapshot()[0]?.execTimeEmaMs).toBeCloseTo(0.008, 9);
  });
});

describe('rate limiter', () => {
  it('registers dynamic-batching models with the node limiter and unregisters them when they unload', async () => {
    const limiter = new RateLimiter();
    // max_batch_size 1: each request is its own execution.
    const config = fakeConfig(
      'instance_group [ { kind: KIND_CPU count: 2 rate_limiter { resources [ { name: "R" count: 1 } ] priority: 2 } } ]\ndynamic_batching { }',
      1,
    );
    const { core, backend } = await node(config, { controlMode: 'explicit', loadModels: ['m'], rateLimiter: limiter });
    expect(limiter.size).toBe(1);
    expect(limiter.capacity({ name: 'R', global: false, count: 1 }, -1)).toBe(1);

    // Both instances are idle, but the one unit of R lets only one execution run at a time.
    backend.gate = true;
    const a = core.infer(request());
    const b = core.infer(request());
    await backend.waitForHeld(1);
    expect(core.modelLoad('m')).toEqual({ queued: 1, inflight: 1 });
    backend.gate = false;
    backend.releaseAll();
    await Promise.all([a, b]);
    expect(backend.executed).toHaveLength(2);

    await core.unloadModel('m');
    await backend.until(() => backend.isClosed('m', 1));
    expect(limiter.size).toBe(0);
  });
});
