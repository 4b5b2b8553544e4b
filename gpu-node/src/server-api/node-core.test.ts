import { afterEach, describe, expect, it } from 'vitest';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { fakeConfig, int32Input, type TestRepository } from '../../test/support/models/test-repository.js';
import type { NodeCoreOptions } from './node-core-impl.js';
import { startTestCore, type TestCore } from '../../test/support/test-core.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function node(build: (repo: TestRepository) => Promise<void>, options: Partial<NodeCoreOptions> = {}): Promise<TestCore> {
  return startTestCore(cleanups, build, options);
}

function request(model: string, version?: string, batch = 1): InferRequest {
  return {
    id: 'r',
    modelName: model,
    ...(version === undefined ? {} : { modelVersion: version }),
    inputs: [int32Input('IN', new Array(4 * batch).fill(7), [batch, 4])],
    parameters: {},
  };
}

describe('NodeCore in none mode', () => {
  it('loads the repository by version policy; a broken config fails only that model, naming the file', async () => {
    const { core } = await node(async (repo) => {
      await repo.addModel('simple', fakeConfig('version_policy: { latest: { num_versions: 2 } }'), [1, 2, 3]);
      await repo.addModel('every', fakeConfig('version_policy: { all: {} }'), [1, 2]);
      await repo.addModel('pinned', fakeConfig('version_policy: { specific: { versions: [ 1 ] } }'), [1, 2]);
      await repo.addModel('broken', 'backend: "fake"\nmax_batch_size: [oops', [1]);
      // No config.pbtxt: auto-complete finds the backend from the folder name, as Triton does.
      await repo.addModel('auto.fake', undefined, [1]);
    });
    const index = await core.repositoryIndex(false);
    const rows = index.map((e) => `${e.name}:${e.version ?? '-'}:${e.state ?? '-'}`);
    expect(rows).toEqual([
      'auto.fake:1:READY',
      'broken:-:UNAVAILABLE',
      'every:1:READY',
      'every:2:READY',
      'pinned:1:READY',
      'simple:2:READY',
      'simple:3:READY',
    ]);
    const broken = index.find((e) => e.name === 'broken');
    expect(broken?.reason).toContain('broken/config.pbtxt');
    expect(core.isLive()).toBe(true);
    expect(core.isReady()).toBe(false); // strict readiness: a model failed to load

    expect(core.modelMetadata('simple')).toEqual({
      name: 'simple',
      versions: ['2', '3'],
      platform: 'fake',
      inputs: [{ name: 'IN', datatype: 'INT32', shape: [-1, 4] }],
      outputs: [{ name: 'OUT', datatype: 'INT32', shape: [-1, 4] }],
    });
    expect(core.modelMetadata('simple', '2').versions).toEqual(['2']);
    expect(core.modelConfig('simple').maxBatchSize).toBe(8);
    expect(core.isModelReady('simple', '3')).toBe(true);

    expect((await core.infer(request('simple'))).modelVersion).toBe('3');
    expect((await core.infer(request('simple', '2'))).modelVersion).toBe('2');
    const response = await core.infer(request('simple'));
    expect(response.outputs.map((o) => [o.name, o.shape])).toEqual([['OUT', [1, 4]]]);
  });

  it("answers Triton's version-resolution errors and refuses load/unload outside explicit mode", async () => {
    const { core } = await node(async (repo) => {
      await repo.addModel('simple', fakeConfig(), [1, 2]);
    });
    await expect(core.infer(request('nope'))).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: "Request for unknown model: 'nope' is not found",
    });
    await expect(core.infer(request('simple', '1'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: "Request for unknown model: 'simple' version 1 is not found",
    });
    expect(() => core.isModelReady('simple', '7')).toThrow("Request for unknown model: 'simple' version 7 is not found");
    await expect(core.infer({ ...request('simple'), inputs: [] })).rejects.toMatchObject({ code: 'INVALID_ARG' });
    for (const call of [() => core.loadModel('simple'), () => core.unloadModel('simple')]) {
      await expect(call()).rejects.toMatchObject({
        code: 'UNAVAILABLE',
        message: 'explicit model load / unload is not allowed if polling is enabled',
      });
    }
    expect(core.isReady()).toBe(true);
    expect(core.serverMetadata()).toMatchObject({ name: 'triton', version: '2.73.0dev' });
  });

  it('with strict config, a folder without config.pbtxt fails with a reason naming the file', async () => {
    const { core } = await node(
      async (repo) => {
        await repo.addModel('auto.fake', undefined, [1]);
      },
      { strict: true },
    );
    const [entry] = await core.repositoryIndex(false);
    expect(entry).toMatchObject({ name: 'auto.fake', state: 'UNAVAILABLE' });
    expect(entry?.reason).toContain('auto.fake/config.pbtxt');
  });
});

describe('NodeCore requests, cancellation and statistics', () => {
  it('a request cancelled while queued is never executed; stats count what happened', async () => {
    const { core, backend } = await node(async (repo) => {
      await repo.addModel('simple', fakeConfig(), [1]);
    });
    backend.gate = true;
    const first = core.infer(request('simple', undefined, 2));
    const controller = new AbortController();
    const second = core.infer(request('simple', undefined, 1), { signal: controller.signal });
    await backend.waitForHeld(1);
    expect(core.modelLoad('simple')).toEqual({ queued: 1, inflight: 1 });
    expect(core.statsSnapshots()[0]?.pendingRequests).toBe(1);

    controller.abort();
    await expect(second).rejects.toMatchObject({ code: 'CANCELLED' });
    backend.releaseAll();
    await first;
    expect(backend.executed).toHaveLength(1);

    const [stats] = core.statistics('simple');
    expect(stats).toMatchObject({
      name: 'simple',
      version: '1',
      inference_count: 2,
      execution_count: 1,
      inference_stats: {
        success: { count: 1 },
        fail: { count: 1 },
        queue: { count: 1 },
        compute_input: { count: 1, ns: 1_000 },
        compute_infer: { count: 1, ns: 5_000 },
        compute_output: { count: 1, ns: 2_000 },
      },
      batch_stats: [{ batch_size: 2, compute_infer: { count: 1, ns: 5_000 } }],
    });
    expect(stats?.last_inference).toBeGreaterThan(0);
    const [snapshot] = core.statsSnapshots();
    expect(snapshot).toMatchObject({
      model: 'simple',
      version: '1',
      requestSuccess: 1,
      requestFailure: { CANCELED: 1, REJECTED: 0, BACKEND: 0, OTHER: 0 },
      inferenceCount: 2,
      executionCount: 1,
      pendingRequests: 0,
      computeInferDurationUs: 5,
    });
    expect(core.statistics()).toHaveLength(1);
    expect(() => core.statistics('nope')).toThrow("requested model 'nope' is not available");
  });

  it('a backend error for one request counts as a BACKEND failure', async () => {
    const optional = [
      'backend: "fake"',
      'max_batch_size: 0',
      'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 4 ] optional: true } ]',
      'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 4 ] } ]',
    ].join('\n');
    const { core } = await node(async (repo) => {
      await repo.addModel('optional', optional, [1]);
    });
    // The fake backend answers a per-request error when a request has no input at all.
    await expect(core.infer({ ...request('optional'), inputs: [] })).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: 'fake backend needs an input',
    });
    expect(core.statsSnapshots()[0]).toMatchObject({
      requestFailure: { BACKEND: 1 },
      executionCount: 1,
      inferenceCount: 1,
    });
    expect(core.statistics('optional')[0]?.inference_stats.fail.count).toBe(1);
  });
});

describe('NodeCore shutdown', () => {
  it('refuses new work, lets in-flight requests finish, then unloads', async () => {
    const { core, backend } = await node(async (repo) => {
      await repo.addModel('simple', fakeConfig(), [1]);
    });
    backend.gate = true;
    const inflight = core.infer(request('simple'));
    await backend.waitForHeld(1);

    const shutdown = core.shutdown({ timeoutMs: 60_000 });
    await expect(core.infer(request('simple'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: 'Server is exiting',
    });
    expect(() => core.isLive()).toThrow('Server exiting');
    expect(backend.isClosed('simple', 1)).toBe(false);

    backend.releaseAll();
    await expect(inflight).resolves.toMatchObject({ modelVersion: '1' });
    await shutdown;
    expect(backend.isClosed('simple', 1)).toBe(true);
  });

  it('gives up waiting after the timeout', async () => {
    const { core, backend } = await node(async (repo) => {
      await repo.addModel('simple', fakeConfig(), [1]);
    });
    backend.gate = true;
    void core.infer(request('simple')).catch(() => undefined);
    await backend.waitForHeld(1);
    await core.shutdown({ timeoutMs: 1 });
    expect(backend.isClosed('simple', 1)).toBe(false);
  });
});
