/**
 * Unload gives memory back (issue 19): a version that was unloaded and replaced by a new load is
 * garbage once its requests are done; the manager keeps no reference to it. Checked with a WeakRef
 * and full collections, so the answer does not depend on timing or on how busy the machine is.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeBackend } from '../../test/support/models/fake-backend.js';
import { TestRepository, fakeConfig, fakePlatform } from '../../test/support/models/test-repository.js';
import { RepositoryManager } from './repository-manager.js';

// A full, synchronous collection on demand (what --expose-gc gives) without restarting vitest's workers.
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('unloading models', () => {
  it('keeps no reference to versions that were unloaded, cycle after cycle', async () => {
    const repo = await TestRepository.create();
    cleanups.push(() => repo.dispose());
    const names = ['a', 'b', 'c'];
    for (const name of names) await repo.addModel(name, fakeConfig('instance_group [ { kind: KIND_CPU count: 2 } ]'), [1]);
    const backend = new FakeBackend();
    const manager = new RepositoryManager({ repositoryPath: repo.path, platform: fakePlatform(backend), controlMode: 'explicit', loadModels: ['*'] });
    cleanups.push(() => manager.stop());
    await manager.start();

    const unloaded: WeakRef<object>[] = [];
    for (let cycle = 0; cycle < 3; cycle++) {
      const versions = names.map((name) => manager.resolve(name));
      unloaded.push(...versions.map((version) => new WeakRef(version)));
      for (const name of names) await manager.unloadModel(name);
      // Unload returns at once; the versions close in the background.
      while (!versions.every((version) => version.state === 'UNAVAILABLE')) await new Promise((resolve) => setImmediate(resolve));
      for (const name of names) await manager.loadModel(name);
      versions.length = 0;
    }
    // WeakRefs read in this turn stay alive until it ends: collect in later turns.
    for (let turn = 0; turn < 3; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      collect();
    }
    expect(unloaded.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
  });
});
