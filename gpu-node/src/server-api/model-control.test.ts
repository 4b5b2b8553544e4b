import { mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { InferRequest } from '../../../shared/src/tensors/index.js';
import { FakeBackend } from '../../test/support/models/fake-backend.js';
import { fakeConfig, fakePlatform, int32Input, type TestRepository } from '../../test/support/models/test-repository.js';
import { createNodeCore, type NodeCoreOptions, type TesseraNodeCore } from './node-core-impl.js';
import { startTestCore } from '../../test/support/test-core.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function node(build: (repo: TestRepository) => Promise<void>, options: Partial<NodeCoreOptions>) {
  const errors: string[] = [];
  // Tests drive poll() themselves.
  const started = await startTestCore(cleanups, build, { pollSecs: 0, onError: (message) => errors.push(message), ...options });
  return { ...started, errors };
}

function request(model: string, version?: string): InferRequest {
  return {
    id: 'r',
    modelName: model,
    ...(version === undefined ? {} : { modelVersion: version }),
    inputs: [int32Input('IN', [1, 2, 3, 4])],
    parameters: {},
  };
}

const rows = async (core: TesseraNodeCore) =>
  (await core.repositoryIndex(false)).map((e) => `${e.name}:${e.version ?? '-'}:${e.state ?? '-'}:${e.reason ?? ''}`);

/** Files written within one mtime tick must still look changed to the poller. */
async function touchLater(path: string): Promise<void> {
  const later = new Date(Date.now() + 60_000);
  await utimes(path, later, later);
}

describe('explicit model control', () => {
  it('loads only the startup models, then loads and unloads through the API', async () => {
    const { core, backend } = await node(
      async (repo) => {
        await repo.addModel('simple', fakeConfig(), [1]);
        await repo.addModel('other', fakeConfig(), [1]);
      },
      { controlMode: 'explicit', loadModels: ['simple'] },
    );
    expect(await rows(core)).toEqual(['other:-:-:', 'simple:1:READY:']);
    expect(core.isReady()).toBe(true);

    await core.loadModel('other');
    expect(core.isModelReady('other')).toBe(true);

    // Unload returns at once; the request in flight finishes, new ones are refused.
    backend.gate = true;
    const inflight = core.infer(request('other'));
    await backend.waitForHeld(1);
    await core.unloadModel('other');
    expect(await rows(core)).toContain('other:1:UNLOADING:');
    await expect(core.infer(request('other'))).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: "Request for unknown model: 'other' has no available versions",
    });
    await expect(core.infer(request('other', '1'))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: "Request for unknown model: 'other' version 1 is not at ready state",
    });
    backend.releaseAll();
    await expect(inflight).resolves.toMatchObject({ modelVersion: '1' });
    await backend.until(() => backend.isClosed('other', 1));
    expect(await rows(core)).toContain('other:1:UNAVAILABLE:unloaded');
    expect(core.isReady()).toBe(true); // unloaded versions do not count against readiness
    await expect(core.unloadModel('never-heard-of')).resolves.toBeUndefined();
  });

  it('a load of a model not in the repository fails with INTERNAL and leaves readiness alone', async () => {
    const { core } = await node(
      async (repo) => {
        await repo.addModel('a', fakeConfig(), [1]);
      },
      { controlMode: 'explicit', loadModels: ['a'] },
    );
    expect(core.isReady()).toBe(true);
    await expect(core.loadModel('missing')).rejects.toMatchObject({
      code: 'INTERNAL',
      message: "failed to load 'missing', failed to poll from model repository",
    });
    expect(core.isReady()).toBe(true);
    expect((await core.repositoryIndex(false)).map((e) => e.name)).toEqual(['a']);
  });

  it('`*` loads everything; a failed load throws and names the config file', async () => {
    const { core } = await node(
      async (repo) => {
        await repo.addModel('a', fakeConfig(), [1]);
        await repo.addModel('broken', 'max_batch_size: "x"', [1]);
      },
      { controlMode: 'explicit', loadModels: ['*'] },
    );
    expect(core.isModelReady('a')).toBe(true);
    expect(core.isReady()).toBe(false);
    const failure = core.loadModel('broken');
    await expect(failure).rejects.toMatchObject({ code: 'INVALID_ARG' });
    await expect(failure).rejects.toThrow(/broken\/config\.pbtxt/);
    await expect(core.loadModel('missing')).rejects.toThrow("failed to load 'missing', failed to poll from model repository");
  });

  it('applies a config JSON override and file overrides written to a temporary model folder', async () => {
    const { core, backend, repo } = await node(
      async (r) => {
        await r.addModel('simple', fakeConfig(), [1]);
      },
      { controlMode: 'explicit', loadModels: ['simple'] },
    );
    const json = JSON.stringify({
      backend: 'fake',
      max_batch_size: 2,
      input: [{ name: 'IN', data_type: 'TYPE_INT32', dims: [4] }],
      output: [{ name: 'OUT', data_type: 'TYPE_INT32', dims: [4] }],
    });
    await core.loadModel('simple', { configJson: json });
    expect(core.modelConfig('simple').maxBatchSize).toBe(2);
    expect(backend.created.at(-1)?.modelDir).toBe(join(repo.path, 'simple'));

    const files = new Map([['3/model.fake', new TextEncoder().encode('override weights')]]);
    await core.loadModel('simple', { configJson: json, files });
    expect(core.modelMetadata('simple').versions).toEqual(['3']);
    expect(backend.created.at(-1)).toMatchObject({ version: 3 });
    expect(backend.created.at(-1)?.modelDir).not.toContain(repo.path);
    expect((await core.infer(request('simple'))).modelVersion).toBe('3');

    await expect(core.loadModel('simple', { files })).rejects.toMatchObject({ code: 'INVALID_ARG' });

    // A plain load serves the repository folder again, swapping back to version 1.
    await core.loadModel('simple');
    expect(core.modelMetadata('simple').versions).toEqual(['1']);
    expect(core.modelConfig('simple').maxBatchSize).toBe(8);
  });

  it('refuses --load-model outside explicit mode', () => {
    expect(() => createNodeCore({ repositoryPath: '/nowhere', platform: fakePlatform(new FakeBackend()), loadModels: ['a'] })).toThrow(
      "Use of '--load-model' requires setting '--model-control-mode=explicit' as well.",
    );
  });
});

describe('poll model control', () => {
  it('loads added models, swaps a new version in only when READY, and lets the old one finish', async () => {
    const { core, backend, repo } = await node(
      async (r) => {
        await r.addModel('simple', fakeConfig('instance_group [ { kind: KIND_CPU count: 2 } ]'), [1]);
      },
      { controlMode: 'poll' },
    );
    await repo.addModel('added', fakeConfig(), [1]);
    await core.poll();
    expect(core.isModelReady('added')).toBe(true);

    // A request is in flight on version 1 when version 2 appears.
    backend.gate = true;
    const onOld = core.infer(request('simple'));
    await backend.waitForHeld(1);
    backend.holdCreates = true;
    await repo.addVersion('simple', 2);
    const polled = core.poll();
    await backend.until(() => backend.heldCreates.length === 2); // both instances of version 2
    // Version 2 is LOADING: version 1 still serves new requests.
    expect(await rows(core)).toContain('simple:1:READY:');
    expect(await rows(core)).toContain('simple:2:LOADING:');
    const alsoOld = core.infer(request('simple'));
    await backend.waitForHeld(2);
    expect(backend.held.map((h) => h.version)).toEqual([1, 1]);

    backend.holdCreates = false;
    for (const held of backend.heldCreates.splice(0)) held.release();
    await polled;
    expect(await rows(core)).toEqual(
      expect.arrayContaining(['simple:1:UNLOADING:', 'simple:2:READY:', 'added:1:READY:']),
    );
    const onNew = core.infer(request('simple'));
    await backend.waitForHeld(3);
    expect(backend.held[2]?.version).toBe(2);
    expect(backend.isClosed('simple', 1)).toBe(false);

    backend.releaseAll();
    await expect(onOld).resolves.toMatchObject({ modelVersion: '1' });
    await expect(alsoOld).resolves.toMatchObject({ modelVersion: '1' });
    await expect(onNew).resolves.toMatchObject({ modelVersion: '2' });
    await backend.until(() => backend.isClosed('simple', 1));
    expect(await rows(core)).toContain('simple:1:UNAVAILABLE:unloaded');
    expect(core.isReady()).toBe(true);
  });

  it('reloads a changed config side by side, keeps the old model when the reload fails, unloads removed models', async () => {
    const { core, backend, repo, errors } = await node(
      async (r) => {
        await r.addModel('simple', fakeConfig(), [1]);
      },
      { controlMode: 'poll' },
    );
    const createdBefore = backend.created.length;
    await core.poll(); // nothing changed: nothing reloads
    expect(backend.created).toHaveLength(createdBefore);

    await repo.writeConfig('simple', fakeConfig('', 4));
    await touchLater(join(repo.path, 'simple', 'config.pbtxt'));
    await core.poll();
    expect(core.modelConfig('simple').maxBatchSize).toBe(4);
    await backend.until(() => backend.isClosed('simple', 1));
    expect(core.isModelReady('simple', '1')).toBe(true);

    await writeFile(join(repo.path, 'simple', 'config.pbtxt'), 'max_batch_size: [');
    await touchLater(join(repo.path, 'simple', 'config.pbtxt'));
    await core.poll();
    expect(errors.at(-1)).toContain('simple/config.pbtxt');
    expect((await core.infer(request('simple'))).modelVersion).toBe('1');

    await repo.removeModel('simple');
    await core.poll();
    await expect(core.infer(request('simple'))).rejects.toMatchObject({ code: 'INVALID_ARG' });
    expect(await core.repositoryIndex(false)).toEqual([]);
    await expect(core.loadModel('simple')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});

describe('model names and folders (issue 14)', () => {
  it('refuses invalid names on load, unload and lookups with INVALID_ARG naming the problem', async () => {
    const { core } = await node(async (repo) => repo.addModel('simple', fakeConfig(), [1]), { controlMode: 'explicit' });
    for (const name of ['../../tmp/x', 'a/b', '..', 'a\\b', 'a\0b', 'x'.repeat(256)]) {
      await expect(core.loadModel(name), name).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/^invalid model name/) });
      await expect(core.unloadModel(name)).rejects.toMatchObject({ code: 'INVALID_ARG' });
      expect(() => core.modelMetadata(name)).toThrow(expect.objectContaining({ code: 'INVALID_ARG' }));
      expect(() => core.isModelReady(name)).toThrow(expect.objectContaining({ code: 'INVALID_ARG' }));
      expect(() => core.statistics(name)).toThrow(expect.objectContaining({ code: 'INVALID_ARG' }));
      await expect(core.infer(request(name))).rejects.toMatchObject({ code: 'INVALID_ARG' });
    }
    // An unknown but valid name is Triton's INVALID_ARG 'is not found' (not a name problem).
    expect(() => core.modelMetadata('missing')).toThrow(expect.objectContaining({ code: 'INVALID_ARG', message: "Request for unknown model: 'missing' is not found" }));
    expect((await core.repositoryIndex(false)).map((e) => e.name)).toEqual(['simple']);
  });

  it('a load whose files cannot be written leaves no index entry and keeps the node ready', async () => {
    const { core } = await node(async (repo) => repo.addModel('simple', fakeConfig(), [1]), { controlMode: 'explicit', loadModels: ['simple'] });
    const files = new Map([['../escape', new Uint8Array(1)]]);
    await expect(core.loadModel('fresh', { configJson: '{"backend":"fake"}', files })).rejects.toMatchObject({ code: 'INVALID_ARG' });
    expect((await core.repositoryIndex(false)).map((e) => e.name)).toEqual(['simple']);
    expect(core.isReady()).toBe(true);
  });

  it('skips a repository folder with an invalid name, with a log line, and never loads it', async () => {
    const { core, errors } = await node(
      async (repo) => {
        await repo.addModel('simple', fakeConfig(), [1]);
        await repo.addModel('bad\nname', fakeConfig(), [1]);
      },
      { controlMode: 'poll' },
    );
    await core.poll();
    expect((await core.repositoryIndex(false)).map((e) => e.name)).toEqual(['simple']);
    expect(errors.filter((e) => e.includes('skipping model repository folder "bad\\nname"'))).toHaveLength(1);
    expect(core.loadSnapshot().map((m) => m.name)).toEqual(['simple']);
  });

  it('refuses a model folder that is a symbolic link leaving the repository', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'tessera-outside-'));
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    await mkdir(join(outside, 'escaped', '1'), { recursive: true });
    await writeFile(join(outside, 'escaped', 'config.pbtxt'), fakeConfig());
    await writeFile(join(outside, 'escaped', '1', 'model.fake'), 'weights');
    const { core } = await node(
      async (repo) => {
        await repo.addModel('inside', fakeConfig(), [1]);
        await symlink(join(repo.path, 'inside'), join(repo.path, 'alias'));
        await symlink(join(outside, 'escaped'), join(repo.path, 'escaped'));
      },
      { controlMode: 'explicit' },
    );
    await expect(core.loadModel('escaped')).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/"escaped": its model folder resolves outside the model repository/),
    });
    expect(() => core.isModelReady('escaped')).toThrow();
    // A link inside the repository still loads, as tritonserver allows.
    await core.loadModel('alias');
    expect(core.isModelReady('alias')).toBe(true);
  });

  it('refuses an ensemble step or a config name that is not a valid model name', async () => {
    const { core } = await node(async (repo) => repo.addModel('simple', fakeConfig(), [1]), { controlMode: 'explicit' });
    const ensemble = JSON.stringify({
      name: 'ens',
      platform: 'ensemble',
      max_batch_size: 8,
      input: [{ name: 'IN', data_type: 'TYPE_INT32', dims: [4] }],
      output: [{ name: 'OUT', data_type: 'TYPE_INT32', dims: [4] }],
      ensemble_scheduling: { step: [{ model_name: '../simple', model_version: -1, input_map: { IN: 'IN' }, output_map: { OUT: 'OUT' } }] },
    });
    await expect(core.loadModel('simple', { configJson: ensemble })).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/model_name: a model name must not contain '\/'/),
    });
  });
});
