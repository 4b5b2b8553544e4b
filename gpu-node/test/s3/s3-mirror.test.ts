/**
 * The S3 mirror against a real S3-compatible server (s3rver on loopback): what it lists, downloads,
 * reuses and removes, and that a failed download leaves that model's previous content whole.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listModelNames, readModelDirectory } from '../../src/repository/model-directory.js';
import { parseS3Url } from '../../src/repository/s3/s3-location.js';
import { S3Mirror } from '../../src/repository/s3/s3-mirror.js';
import { S3RVER_CREDENTIALS, startS3Server, type TestS3Server } from './s3-server.js';

const BUCKET = 'mirror';

describe('S3 mirror', () => {
  let s3: TestS3Server;
  let prefix: string;
  let mirror: S3Mirror | undefined;
  let run = 0;

  const clientFor = (): S3Client =>
    new S3Client({ endpoint: s3.endpoint, forcePathStyle: true, region: 'us-east-1', credentials: S3RVER_CREDENTIALS });
  const open = async (url: string, client = clientFor()): Promise<S3Mirror> => {
    mirror = await S3Mirror.open(parseS3Url(url), { client, listPageSize: 2 });
    return mirror;
  };
  const text = (path: string): Promise<string> => readFile(join(mirror?.path ?? '', path), 'utf8');

  beforeAll(async () => {
    s3 = await startS3Server([BUCKET]);
  });
  afterAll(async () => {
    await s3?.close();
  });
  beforeEach(() => {
    prefix = `run${++run}/repo/`;
  });
  afterEach(async () => {
    await mirror?.close();
    mirror = undefined;
  });

  it('mirrors model folders page by page, then downloads only what changed and drops removed models', async () => {
    await s3.putObject(BUCKET, `${prefix}a/config.pbtxt`, 'name: "a"');
    await s3.putObject(BUCKET, `${prefix}a/1/model.bin`, 'a-one');
    await s3.putObject(BUCKET, `${prefix}b/config.pbtxt`, 'name: "b"');
    await s3.putObject(BUCKET, `${prefix}b/1/model.bin`, 'b-one');
    await s3.putObject(BUCKET, `${prefix}README.md`, 'a file at the root is not a model');
    await s3.putObject(BUCKET, `${prefix}.hidden/config.pbtxt`, 'hidden');
    const m = await open(`s3://${BUCKET}/${prefix}`);
    await m.sync();
    expect(await listModelNames(m.path)).toEqual(['a', 'b']);
    expect(await readdir(m.path)).toEqual(expect.arrayContaining(['a', 'b']));
    expect(await text('a/1/model.bin')).toBe('a-one');
    expect((await lstat(join(m.path, 'a'))).isSymbolicLink()).toBe(true);
    const before = await readModelDirectory(join(m.path, 'a'), 'a');
    const inode = (await stat(join(m.path, 'a/1/model.bin'))).ino;

    await s3.putObject(BUCKET, `${prefix}a/2/model.bin`, 'a-two');
    await s3.putObject(BUCKET, `${prefix}b/1/model.bin`, 'b-one, replaced');
    await m.sync();
    const after = await readModelDirectory(join(m.path, 'a'), 'a');
    expect(after.versions).toEqual([1, 2]);
    // Version 1 of 'a' was not downloaded again: same file, so the poller sees it unchanged.
    expect((await stat(join(m.path, 'a/1/model.bin'))).ino).toBe(inode);
    expect(after.fingerprints.get(1)).toBe(before.fingerprints.get(1));
    expect(await text('a/2/model.bin')).toBe('a-two');
    expect(await text('b/1/model.bin')).toBe('b-one, replaced');

    await s3.deletePrefix(BUCKET, `${prefix}b/`);
    await m.sync();
    expect(await listModelNames(m.path)).toEqual(['a']);

    // An empty repository later on is not an error: every model was removed.
    await s3.deletePrefix(BUCKET, prefix);
    await m.sync();
    expect(await listModelNames(m.path)).toEqual([]);

    const path = m.path;
    await m.close();
    mirror = undefined;
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('keeps the previous content of a model whose download failed, and updates the others', async () => {
    await s3.putObject(BUCKET, `${prefix}a/config.pbtxt`, 'name: "a"');
    await s3.putObject(BUCKET, `${prefix}a/1/model.bin`, 'a-one');
    await s3.putObject(BUCKET, `${prefix}b/1/model.bin`, 'b-one');
    const client = clientFor();
    let failKey: string | undefined;
    // The server is real; only this one GET is made to fail, as a dropped connection would.
    client.middlewareStack.add(
      (next) => async (args) => {
        const input = args.input as { Key?: string };
        if (input.Key !== undefined && input.Key === failKey) throw new Error('connection reset');
        return next(args);
      },
      { step: 'initialize' },
    );
    const m = await open(`s3://${BUCKET}/${prefix}`, client);
    await m.sync();

    await s3.putObject(BUCKET, `${prefix}a/2/model.bin`, 'a-two');
    await s3.putObject(BUCKET, `${prefix}a/2/other.bin`, 'a-two, second file');
    await s3.putObject(BUCKET, `${prefix}b/1/model.bin`, 'b-one, replaced');
    failKey = `${prefix}a/2/other.bin`;
    await expect(m.sync()).rejects.toThrow(
      `cannot download from model repository s3://${BUCKET}/${prefix}: model 'a': connection reset`,
    );
    expect((await readModelDirectory(join(m.path, 'a'), 'a')).versions).toEqual([1]);
    expect(await text('b/1/model.bin')).toBe('b-one, replaced');

    failKey = undefined;
    await m.sync();
    expect((await readModelDirectory(join(m.path, 'a'), 'a')).versions).toEqual([1, 2]);
    expect(await text('a/2/other.bin')).toBe('a-two, second file');
  });

  it('fails the first sync with the URL and the S3 error: missing bucket, empty prefix', async () => {
    const missing = await open('s3://no-such-bucket/models');
    await expect(missing.sync()).rejects.toThrow(
      'cannot read model repository s3://no-such-bucket/models: NoSuchBucket (HTTP 404): The specified bucket does not exist',
    );
    await missing.close();
    const empty = await open(`s3://${BUCKET}/${prefix}`);
    await expect(empty.sync()).rejects.toThrow(`no objects under s3://${BUCKET}/${prefix}`);
  });
});
