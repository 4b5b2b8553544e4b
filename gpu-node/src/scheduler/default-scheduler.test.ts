import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { ModelConfigSchema } from '../../../shared/src/gen/model_config_pb.js';
import type { BackendInstance, ExecutionRequest, InstanceSpec, ModelSource } from '../backends/backend.js';
import { FakeBackend } from '../../test/support/models/fake-backend.js';
import { DefaultScheduler } from './default-scheduler.js';
import type { ExecutionObserver } from './scheduler.js';

const source: ModelSource = {
  name: 'm',
  version: 1,
  modelDir: '/r/m',
  versionDir: '/r/m/1',
  modelPath: '/r/m/1/model.fake',
  config: create(ModelConfigSchema, { name: 'm', output: [{ name: 'OUT' }] }),
};

function spec(index: number): InstanceSpec {
  return { name: `m_${index}`, groupName: 'm', kind: 'cpu', device: -1, auto: false };
}

async function instances(backend: FakeBackend, count: number): Promise<BackendInstance[]> {
  const made: BackendInstance[] = [];
  for (let i = 0; i < count; i++) made.push(await backend.createInstance(source, spec(i)));
  return made;
}

function request(tag: number, signal?: AbortSignal) {
  const execution: ExecutionRequest = {
    inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: new Uint8Array(new Int32Array([tag]).buffer) }],
    requestedOutputs: [],
    parameters: { tag },
  };
  return { execution, batchSize: 1, signal };
}

const tags = (backend: FakeBackend) => backend.executed.map((e) => e.requests[0]?.parameters['tag']);

describe('DefaultScheduler', () => {
  it('runs one request per execution, first idle instance takes the next one, FIFO', async () => {
    const backend = new FakeBackend();
    backend.gate = true;
    const executions: number[] = [];
    const observer: ExecutionObserver = { executionFinished: (size) => executions.push(size) };
    const scheduler = new DefaultScheduler(await instances(backend, 2), observer);

    const results = [1, 2, 3, 4].map((tag) => scheduler.enqueue(request(tag)));
    await backend.waitForHeld(2);
    expect(scheduler.inflight()).toBe(2);
    expect(scheduler.queued()).toBe(2);
    expect(backend.held.map((h) => h.instance)).toEqual(['m_0', 'm_1']);

    // m_1 finishes first, so it pulls request 3.
    backend.held.splice(1, 1)[0]?.release();
    await backend.waitForHeld(2);
    expect(backend.held[1]?.instance).toBe('m_1');
    expect(backend.held[1]?.requests[0]?.parameters['tag']).toBe(3);

    backend.gate = false;
    backend.releaseAll();
    const answered = await Promise.all(results);
    expect(answered.every((r) => 'outputs' in r.result)).toBe(true);
    expect(tags(backend)).toEqual([1, 2, 3, 4]);
    expect(executions).toEqual([1, 1, 1, 1]);
    expect(scheduler.inflight() + scheduler.queued()).toBe(0);
  });

  it('a request aborted while queued leaves the queue and never executes', async () => {
    const backend = new FakeBackend();
    backend.gate = true;
    const scheduler = new DefaultScheduler(await instances(backend, 1));
    const first = scheduler.enqueue(request(1));
    const controller = new AbortController();
    const second = scheduler.enqueue(request(2, controller.signal));
    const third = scheduler.enqueue(request(3));
    await backend.waitForHeld(1);
    expect(scheduler.queued()).toBe(2);

    controller.abort();
    await expect(second).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(scheduler.queued()).toBe(1);

    backend.gate = false;
    backend.releaseAll();
    await Promise.all([first, third]);
    expect(tags(backend)).toEqual([1, 3]);
  });

  it('a request aborted while executing is answered CANCELLED and its late result dropped', async () => {
    const backend = new FakeBackend();
    backend.gate = true;
    const scheduler = new DefaultScheduler(await instances(backend, 1));
    const controller = new AbortController();
    const running = scheduler.enqueue(request(1, controller.signal));
    await backend.waitForHeld(1);
    controller.abort();
    await expect(running).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(scheduler.inflight()).toBe(1); // the instance stays busy until the backend returns
    backend.releaseAll();
    const stopped = scheduler.stop();
    await stopped;
    expect(scheduler.inflight()).toBe(0);
  });

  it('a request aborted by its deadline while executing is answered DEADLINE_EXCEEDED', async () => {
    const backend = new FakeBackend();
    backend.gate = true;
    const scheduler = new DefaultScheduler(await instances(backend, 1));
    const controller = new AbortController();
    const running = scheduler.enqueue(request(1, controller.signal));
    await backend.waitForHeld(1);
    controller.abort(TesseraError.deadlineExceeded('the request deadline passed'));
    await expect(running).rejects.toMatchObject({ code: 'DEADLINE_EXCEEDED' });
    backend.releaseAll();
    await scheduler.stop();
  });

  it('an already-aborted signal is refused without queueing', async () => {
    const backend = new FakeBackend();
    const scheduler = new DefaultScheduler(await instances(backend, 1));
    await expect(scheduler.enqueue(request(1, AbortSignal.abort()))).rejects.toMatchObject({ code: 'CANCELLED' });
    expect(backend.executed).toHaveLength(0);
  });

  it('stop() refuses new work and resolves only after accepted work finished', async () => {
    const backend = new FakeBackend();
    backend.gate = true;
    const scheduler = new DefaultScheduler(await instances(backend, 1));
    const a = scheduler.enqueue(request(1));
    const b = scheduler.enqueue(request(2));
    await backend.waitForHeld(1);
    let stopped = false;
    const stopping = scheduler.stop().then(() => {
      stopped = true;
    });
    await expect(scheduler.enqueue(request(3))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'Server is stopping, scheduler for model has stopped accepting new inference requests',
    });
    backend.releaseAll();
    await a;
    expect(stopped).toBe(false);
    await backend.waitForHeld(1);
    backend.releaseAll();
    await b;
    await stopping;
    expect(stopped).toBe(true);
    expect(tags(backend)).toEqual([1, 2]);
  });

  it('a backend that throws fails only the requests of that execution, with INTERNAL', async () => {
    const backend = new FakeBackend();
    backend.gate = true;
    const scheduler = new DefaultScheduler(await instances(backend, 1));
    const a = scheduler.enqueue(request(1));
    const b = scheduler.enqueue(request(2));
    await backend.waitForHeld(1);
    backend.held.shift()?.fail(new Error('kaboom'));
    await expect(a).rejects.toMatchObject({ code: 'INTERNAL', message: 'kaboom' });
    backend.gate = false;
    backend.releaseAll();
    await expect(b).resolves.toHaveProperty('result.outputs');
  });
});

describe('DefaultScheduler with an instance that takes several executions at once', () => {
  it('hands it up to its concurrency at once and queues the rest', async () => {
    const running: (() => void)[] = [];
    let peak = 0;
    const instance: BackendInstance = {
      spec: spec(0),
      concurrency: 3,
      execute: () =>
        new Promise((resolve) => {
          running.push(() => resolve({ results: [{ outputs: [] }], timing: { computeInputNs: 0, computeInferNs: 0, computeOutputNs: 0 } }));
          peak = Math.max(peak, running.length);
        }),
      close: () => Promise.resolve(),
    };
    const scheduler = new DefaultScheduler([instance]);
    const answers = [1, 2, 3, 4, 5].map((tag) => scheduler.enqueue(request(tag)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(scheduler.inflight()).toBe(3);
    expect(scheduler.queued()).toBe(2);
    while (running.length > 0) {
      running.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(answers);
    expect(peak).toBe(3);
    expect(scheduler.inflight()).toBe(0);
  });
});
