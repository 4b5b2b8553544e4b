import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { ModelConfigSchema, ModelQueuePolicy_TimeoutAction } from '../../../../shared/src/gen/model_config_pb.js';
import type { BackendInstance, ExecutionBatchResult, ExecutionRequest } from '../../backends/backend.js';
import type { ScheduledRequest } from '../scheduler.js';
import { DynamicBatchScheduler } from './dynamic-batch-scheduler.js';
import { FakeClock, flushPromises } from './fake-clock.js';
import { track } from '../../../test/support/batcher-test-support.js';

const timing = { computeInputNs: 1, computeInferNs: 2, computeOutputNs: 3 };

function backendInstance() {
  const batches: ExecutionRequest[][] = [];
  const finish: (() => void)[] = [];
  const instance: BackendInstance = {
    spec: { name: 'm_0', groupName: 'm', kind: 'cpu', device: -1, auto: false },
    execute(requests) {
      batches.push([...requests]);
      return new Promise<ExecutionBatchResult>((resolve) =>
        finish.push(() => resolve({ results: requests.map(() => ({ outputs: [] })), timing })),
      );
    },
    close: () => Promise.resolve(),
  };
  return { instance, batches, finish };
}

function request(parameters: Record<string, number> = {}): ScheduledRequest {
  const data = new Uint8Array(16);
  return { batchSize: 1, execution: { inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 4], data }], requestedOutputs: [], parameters } };
}

describe('DynamicBatchScheduler', () => {
  it('batches per the config, reads priority/timeout parameters and reports queue time and timing', async () => {
    const config = create(ModelConfigSchema, {
      name: 'm',
      maxBatchSize: 4,
      input: [{ name: 'x', dims: [4n] }],
      schedulingChoice: {
        case: 'dynamicBatching',
        value: {
          maxQueueDelayMicroseconds: 100n,
          priorityLevels: 2n,
          defaultPriorityLevel: 2n,
          defaultQueuePolicy: {
            timeoutAction: ModelQueuePolicy_TimeoutAction.REJECT,
            defaultTimeoutMicroseconds: 1000n,
            allowTimeoutOverride: true,
          },
        },
      },
    });
    const clock = new FakeClock();
    const { instance, batches, finish } = backendInstance();
    const executed: number[] = [];
    const scheduler = new DynamicBatchScheduler(config, [instance], { executionFinished: (n) => executed.push(n) }, { clock });
    const low = track(scheduler.enqueue(request()));
    const high = track(scheduler.enqueue(request({ priority: 1 })));
    const expiring = track(scheduler.enqueue(request({ timeout: 50 })));
    await clock.advance(50);
    expect(expiring.error).toMatchObject({ code: 'UNAVAILABLE', message: 'Request timeout expired' });
    expect(scheduler.queued()).toBe(2);
    await clock.advance(50);
    expect(batches).toHaveLength(1);
    expect(batches[0]![0]!.parameters).toEqual({ priority: 1 });
    finish.shift()!();
    await flushPromises();
    expect(high.value).toEqual({ result: { outputs: [] }, queueNs: 100_000, timing });
    expect(low.status).toBe('resolved');
    expect(executed).toEqual([2]);
    await scheduler.stop();
    await expect(scheduler.enqueue(request())).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });

  it('answers each request of a batch with its own result and queue time, and a cancelled one alone with CANCELLED', async () => {
    const config = create(ModelConfigSchema, {
      name: 'm',
      maxBatchSize: 4,
      input: [{ name: 'x', dims: [4n] }],
      schedulingChoice: { case: 'dynamicBatching', value: { maxQueueDelayMicroseconds: 300n, preferredBatchSize: [3] } },
    });
    const clock = new FakeClock();
    const { instance, batches, finish } = backendInstance();
    const scheduler = new DynamicBatchScheduler(config, [instance], undefined, { clock });
    const leaving = new AbortController();
    const first = track(scheduler.enqueue(request()));
    await clock.advance(100);
    const second = track(scheduler.enqueue({ ...request(), signal: leaving.signal }));
    await clock.advance(100);
    const third = track(scheduler.enqueue(request({ priority: 0 })));
    await flushPromises();
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(3);
    leaving.abort();
    await flushPromises();
    expect(second.status).toBe('rejected');
    expect(second.error).toMatchObject({ code: 'CANCELLED' });
    expect(first.status).toBe('pending');
    expect(third.status).toBe('pending');
    finish.shift()!();
    await flushPromises();
    expect(first.value).toEqual({ result: { outputs: [] }, queueNs: 200_000, timing });
    expect(third.value).toEqual({ result: { outputs: [] }, queueNs: 0, timing });
    await scheduler.stop();
  });
});
