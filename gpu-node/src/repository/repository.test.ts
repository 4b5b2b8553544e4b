import { fromJson } from '@bufbuild/protobuf';
import { mkdir, mkdtemp, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelVersionPolicySchema } from '../../../shared/src/gen/model_config_pb.js';
import { TestRepository } from '../../test/support/models/test-repository.js';
import { listModelNames, readModelDirectory } from './model-directory.js';
import { writeOverrideDirectory } from './override-directory.js';
import { parseVersionFolder, selectVersions } from './version-policy.js';

describe('version policy', () => {
  const available = [3, 1, 10, 2];
  it('defaults to the latest version', () => {
    expect(selectVersions(undefined, available)).toEqual([10]);
  });
  it('latest N, all, specific', () => {
    // fromJson keeps the test independent of how int64 fields are generated (bigint or number).
    const latest = fromJson(ModelVersionPolicySchema, { latest: { numVersions: 2 } });
    const all = fromJson(ModelVersionPolicySchema, { all: {} });
    const specific = fromJson(ModelVersionPolicySchema, { specific: { versions: [1, 3, 7] } });
    expect(selectVersions(latest, available)).toEqual([3, 10]);
    expect(selectVersions(all, available)).toEqual([1, 2, 3, 10]);
    expect(selectVersions(specific, available)).toEqual([1, 3]);
    expect(selectVersions(specific, [2])).toEqual([]);
  });
  it('accepts only positive numeric folder names without leading zeros', () => {
    expect(parseVersionFolder('12')).toBe(12);
    for (const name of ['0', '01', 'v1', '1a', '', '-1']) expect(parseVersionFolder(name)).toBeUndefined();
  });
});

describe('model directory', () => {
  let repo: TestRepository;
  beforeEach(async () => {
    repo = await TestRepository.create();
  });
  afterEach(async () => {
    await repo.dispose();
  });

  it('follows symbolic links to model folders and ignores dangling ones', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'tessera-linked-model-'));
    try {
      await mkdir(join(elsewhere, '1'));
      await writeFile(join(elsewhere, 'config.pbtxt'), 'backend: "fake"');
      await symlink(elsewhere, join(repo.path, 'linked'));
      await symlink(join(elsewhere, 'missing'), join(repo.path, 'dangling'));
      await writeFile(join(elsewhere, 'file'), 'x');
      await symlink(join(elsewhere, 'file'), join(repo.path, 'file-link'));
      expect(await listModelNames(repo.path)).toEqual(['linked']);
      const linked = await readModelDirectory(join(repo.path, 'linked'), 'linked');
      expect(linked.configText).toBe('backend: "fake"');
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('lists model folders and reads config text and numeric versions', async () => {
    await repo.addModel('b', 'backend: "fake"', [1, 2]);
    await repo.addModel('a', undefined, [3]);
    await mkdir(join(repo.path, 'b', 'not-a-version'));
    await mkdir(join(repo.path, '.hidden'));
    await writeFile(join(repo.path, 'README'), 'not a model');
    expect(await listModelNames(repo.path)).toEqual(['a', 'b']);

    const b = await readModelDirectory(join(repo.path, 'b'), 'b');
    expect(b.configText).toBe('backend: "fake"');
    expect(b.versions).toEqual([1, 2]);
    const a = await readModelDirectory(join(repo.path, 'a'), 'a');
    expect(a.configText).toBeUndefined();
    expect(a.versions).toEqual([3]);
  });

  it('fingerprints change per version with its files, and for all versions with the config', async () => {
    await repo.addModel('m', 'backend: "fake"', [1, 2]);
    const before = await readModelDirectory(join(repo.path, 'm'), 'm');

    const file = join(repo.path, 'm', '2', 'model.fake');
    await writeFile(file, 'new weights, longer');
    await utimes(file, new Date(), new Date(Date.now() + 5_000));
    const afterVersion = await readModelDirectory(join(repo.path, 'm'), 'm');
    expect(afterVersion.fingerprints.get(1)).toBe(before.fingerprints.get(1));
    expect(afterVersion.fingerprints.get(2)).not.toBe(before.fingerprints.get(2));
    expect(afterVersion.fingerprint).not.toBe(before.fingerprint);

    await repo.writeConfig('m', 'backend: "fake"\nmax_batch_size: 2');
    const afterConfig = await readModelDirectory(join(repo.path, 'm'), 'm');
    expect(afterConfig.fingerprints.get(1)).not.toBe(afterVersion.fingerprints.get(1));
    expect(afterConfig.fingerprints.get(2)).not.toBe(afterVersion.fingerprints.get(2));
  });

  it('writes load-API file overrides into a temporary model folder and refuses escapes', async () => {
    const override = await writeOverrideDirectory(
      'm',
      new Map([['1/model.fake', new TextEncoder().encode('bytes')]]),
    );
    const dir = await readModelDirectory(override.modelPath, 'm');
    expect(dir.versions).toEqual([1]);
    await override.remove();
    await expect(
      writeOverrideDirectory('m', new Map([['../../etc/x', new Uint8Array(1)]])),
    ).rejects.toMatchObject({ code: 'INVALID_ARG' });
  });

  it('refuses a bad model name or file path before writing, and removes the whole folder on failure', async () => {
    // A private TMPDIR (os.tmpdir() reads it per call): other suites' override folders cannot interfere.
    const privateTmp = await mkdtemp(join(tmpdir(), 'tessera-override-test-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    try {
      await refuseAll();
      expect(await readdir(privateTmp)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      await rm(privateTmp, { recursive: true, force: true });
    }
  });

  async function refuseAll(): Promise<void> {
    const bytes = new Uint8Array(1);
    const refused: [string, string, RegExp][] = [
      ['../../tmp/x', '1/model.fake', /invalid model name/],
      ['..', '1/model.fake', /invalid model name/],
      ['m', '/etc/passwd', /must be relative/],
      ['m', '1/../../x', /'\.\.' segment/],
      ['m', '1\\model.fake', /contains '\\'/],
      ['m', '1/model\0.fake', /NUL/],
    ];
    for (const [name, path, message] of refused) {
      // A first, valid file is written before the bad one is seen: the folder must still go.
      const files = new Map([['1/first.fake', bytes], [path, bytes]]);
      await expect(writeOverrideDirectory(name, files)).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(message) });
    }
  }

  it('writes into a private 0700 folder and normalizes paths', async () => {
    const override = await writeOverrideDirectory('m', new Map([['1//./model.fake', new Uint8Array(1)]]));
    try {
      expect((await stat(dirname(override.modelPath))).mode & 0o777).toBe(0o700);
      expect((await stat(join(override.modelPath, '1', 'model.fake'))).isFile()).toBe(true);
    } finally {
      await override.remove();
    }
  });
});
