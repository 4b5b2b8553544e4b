/**
 * Many models on one node (issue 19): loads run --model-load-thread-count at a time, each model is
 * READY as soon as its own load is done, a failing model does not hold up the others, and a poll that
 * finds nothing changed reads no file.
 */
import type * as FsPromises from 'node:fs/promises';
import { utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeBackend } from '../../test/support/models/fake-backend.js';
import { TestRepository, fakeConfig, fakePlatform } from '../../test/support/models/test-repository.js';
import { startTestCore } from '../../test/support/test-core.js';
import { createNodeCore } from './node-core-impl.js';

// Every file read of the process goes through here, so a test can say which files a poll read.
const reads: string[] = [];
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  const readFile = ((path: Parameters<typeof real.readFile>[0], ...rest: unknown[]) => {
    reads.push(String(path));
    return (real.readFile as (...args: unknown[]) => Promise<unknown>)(path, ...rest);
  }) as typeof real.readFile;
  return { ...real, readFile, default: { ...real, readFile } };
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const modelReady = (core: { isModelReady(name: string): boolean }, name: string): boolean => {
  try {
    return core.isModelReady(name);
  } catch {
    return false; // not loaded yet: the core answers NOT_FOUND
  }
};

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('many models on one node', () => {
  it('loads --model-load-thread-count models at a time, each READY as soon as its own load is done', async () => {
    const repo = await TestRepository.create();
    cleanups.push(() => repo.dispose());
    const names = ['m0', 'm1', 'm2', 'm3', 'm4'];
    for (const name of names) await repo.addModel(name, fakeConfig(), [1]);
    const backend = new FakeBackend();
    backend.holdCreates = true;
    const core = createNodeCore({ repositoryPath: repo.path, platform: fakePlatform(backend), loadThreadCount: 2 });
    cleanups.push(() => {
      backend.holdCreates = false;
      for (const held of backend.heldCreates.splice(0)) held.release();
      return core.shutdown({ timeoutMs: 1_000 });
    });
    const started = core.start();
    const loadingAtOnce: number[] = [];
    const readyWhileOthersLoad: string[] = [];
    for (let done = 0; done < names.length; done++) {
      // Both loads the limit allows must get to their sessions (file reads are real I/O, so wait, not count turns).
      const allowed = Math.min(2, names.length - done);
      await backend.until(() => backend.heldCreates.length >= allowed);
      await turns(20); // room for a load beyond the limit to show up, were there one
      loadingAtOnce.push(new Set(backend.heldCreates.map((h) => h.source.name)).size);
      const next = backend.heldCreates.shift();
      const name = next?.source.name ?? '';
      next?.release();
      while (!modelReady(core, name)) await turns(1);
      if (!core.isReady()) readyWhileOthersLoad.push(name);
    }
    await started;
    expect(Math.max(...loadingAtOnce)).toBe(2);
    // Which of two parallel loads reaches its session first is up to the file system: the order is not the point.
    expect(readyWhileOthersLoad).toHaveLength(4);
    expect(new Set(readyWhileOthersLoad).size).toBe(4);
    expect(core.isReady()).toBe(true);
  });

  it('a model that fails to load among good ones is UNAVAILABLE with its reason; the others serve', async () => {
    const repo = await TestRepository.create();
    cleanups.push(() => repo.dispose());
    for (let i = 0; i < 8; i++) await repo.addModel(`good${i}`, fakeConfig(), [1]);
    await repo.addModel('bad', fakeConfig(), [1]);
    const backend = new FakeBackend();
    backend.failCreate = (source) => (source.name === 'bad' ? 'the weights are corrupt' : undefined);
    const core = createNodeCore({ repositoryPath: repo.path, platform: fakePlatform(backend), loadThreadCount: 4 });
    cleanups.push(() => core.shutdown({ timeoutMs: 1_000 }));
    await core.start();
    const index = await core.repositoryIndex(false);
    expect(index.filter((e) => e.state === 'READY').map((e) => e.name)).toEqual(Array.from({ length: 8 }, (_, i) => `good${i}`));
    expect(index.find((e) => e.name === 'bad')).toMatchObject({ state: 'UNAVAILABLE', reason: 'the weights are corrupt' });
    expect(core.isModelReady('good7')).toBe(true);
    expect(core.isReady()).toBe(false);
  });
});

describe('polling many models', () => {
  it('a poll that finds nothing changed reads no file; a changed model is the only one read again', async () => {
    const { core, backend, repo } = await startTestCore(
      cleanups,
      async (r) => {
        for (let i = 0; i < 20; i++) await r.addModel(`m${i}`, fakeConfig(), [1]);
      },
      { controlMode: 'poll', pollSecs: 0 },
    );
    expect(core.isReady()).toBe(true);
    const created = backend.created.length;
    reads.length = 0;
    await core.poll();
    await core.poll();
    expect(reads).toEqual([]);
    expect(backend.created.length).toBe(created);

    // A config touched later than any poll so far: only that model is read (and reloaded).
    const config = join(repo.path, 'm7', 'config.pbtxt');
    const later = new Date(Date.now() + 60_000);
    await utimes(config, later, later);
    await core.poll();
    expect(new Set(reads.map((path) => path.slice(repo.path.length + 1).split('/')[0]))).toEqual(new Set(['m7']));
    reads.length = 0;
    await core.poll();
    expect(reads).toEqual([]);
  });
});
