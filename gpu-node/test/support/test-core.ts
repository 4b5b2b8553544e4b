/**
 * Test support for the core's suites: a started core over a fresh TestRepository (filled by `build`)
 * and a FakeBackend whose executions and instance creations the tests hold at its gates. Its cleanup
 * (open the gates, release what they hold, shut the core down, remove the repository) goes on
 * `cleanups`, which the suite's afterEach runs in reverse.
 */
import { FakeBackend } from './models/fake-backend.js';
import { TestRepository, fakePlatform } from './models/test-repository.js';
import { createNodeCore, type NodeCoreOptions, type TesseraNodeCore } from '../../src/server-api/node-core-impl.js';

export interface TestCore {
  readonly core: TesseraNodeCore;
  readonly backend: FakeBackend;
  readonly repo: TestRepository;
}

export async function startTestCore(
  cleanups: (() => Promise<void>)[],
  build: (repo: TestRepository) => Promise<void>,
  options: Partial<NodeCoreOptions> = {},
): Promise<TestCore> {
  const repo = await TestRepository.create();
  cleanups.push(() => repo.dispose());
  await build(repo);
  const backend = new FakeBackend();
  const core = createNodeCore({ repositoryPath: repo.path, platform: fakePlatform(backend), ...options });
  cleanups.push(() => {
    backend.gate = false;
    backend.holdCreates = false;
    backend.releaseAll();
    return core.shutdown({ timeoutMs: 1_000 });
  });
  await core.start();
  return { core, backend, repo };
}
