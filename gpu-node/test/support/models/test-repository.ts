/**
 * Temporary model repositories for tests: real config.pbtxt files and version folders holding a
 * `model.fake` file, served by FakeBackend through the real config reader.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelPlatform } from '../../../src/models/model-platform.js';
import { createModelPlatform } from '../../../src/models/default-platform.js';
import type { FakeBackend } from './fake-backend.js';

/** A batching model: IN/OUT INT32 [-1, 4], max_batch_size 8, served by the fake backend. */
export function fakeConfig(extra = '', maxBatchSize = 8): string {
  return [
    'backend: "fake"',
    `max_batch_size: ${maxBatchSize}`,
    'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 4 ] } ]',
    'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 4 ] } ]',
    extra,
  ].join('\n');
}

export class TestRepository {
  private constructor(readonly path: string) {}

  static async create(): Promise<TestRepository> {
    return new TestRepository(await mkdtemp(join(tmpdir(), 'tessera-repo-')));
  }

  async addModel(name: string, config: string | undefined, versions: readonly number[]): Promise<void> {
    await mkdir(join(this.path, name), { recursive: true });
    if (config !== undefined) await this.writeConfig(name, config);
    for (const version of versions) await this.addVersion(name, version);
  }

  async writeConfig(name: string, config: string): Promise<void> {
    await writeFile(join(this.path, name, 'config.pbtxt'), config);
  }

  async addVersion(name: string, version: number, content = 'weights'): Promise<void> {
    await mkdir(join(this.path, name, String(version)), { recursive: true });
    await writeFile(join(this.path, name, String(version), 'model.fake'), content);
  }

  async removeVersion(name: string, version: number): Promise<void> {
    await rm(join(this.path, name, String(version)), { recursive: true, force: true });
  }

  async removeModel(name: string): Promise<void> {
    await rm(join(this.path, name), { recursive: true, force: true });
  }

  async dispose(): Promise<void> {
    await rm(this.path, { recursive: true, force: true });
  }
}

export function fakePlatform(backend: FakeBackend): ModelPlatform {
  return createModelPlatform({
    backends: (name) => (name === backend.name ? backend : undefined),
    visibleGpus: () => [],
  });
}

/** An INT32 tensor of `values`, shaped [1, values.length] unless told otherwise. */
export function int32Input(name: string, values: readonly number[], shape: readonly number[] = [1, values.length]) {
  return { name, datatype: 'INT32' as const, shape, data: new Uint8Array(new Int32Array(values).buffer) };
}
