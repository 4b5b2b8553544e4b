/**
 * A local mirror of an S3 model repository: the rest of the node reads `path` as an ordinary local
 * repository, and sync() brings it up to date with the bucket (list, download new or changed objects
 * by ETag and size, drop removed ones).
 *
 * Each model is replaced as a whole: its files are staged in a new generation folder and the model's
 * entry in `path` is a symbolic link that is swapped with one rename(2), so a poll or a load never sees
 * half a model. (Renaming folders would need two renames, leaving a moment with no model folder.)
 * Unchanged files are hard-linked from the previous generation, which keeps their mtime, so the
 * repository fingerprints of unchanged versions stay the same and only changed versions reload.
 */
import { GetObjectCommand, ListObjectsV2Command, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, mkdtemp, rename, rm, stat, symlink, unlink, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { S3Location } from './s3-location.js';

interface RemoteFile {
  readonly key: string;
  readonly etag: string;
  readonly size: number;
}

/** One model as listed: files by path relative to the model folder; '' + '/'-ending paths are folders. */
type RemoteModel = Map<string, RemoteFile>;

interface MirroredModel {
  /** Identifies the listed content: when it is unchanged, nothing is downloaded. */
  readonly manifest: string;
  readonly files: RemoteModel;
  /** The generation folder the model's link points at. */
  readonly dir: string;
}

export interface S3MirrorOptions {
  /** A client to use instead of one from the SDK's default chain (closed with the mirror). */
  readonly client?: S3Client;
  /** Cache folder to use; default a new temporary folder. Removed by close() either way. */
  readonly cacheDir?: string;
  /** Told about skipped keys. */
  readonly logger?: Logger;
  /** Keys per listing page; default the server's (1000 on S3). Tests make it small to cover paging. */
  readonly listPageSize?: number;
}

/** Files downloaded at once within one model. */
const DOWNLOAD_CONCURRENCY = 8;

/**
 * The S3 client from the SDK's default chain (credentials, region, and the endpoint of
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL or the config file). S3-compatible servers behind an
 * endpoint are addressed path-style: virtual-host buckets need DNS they rarely have.
 */
export async function createS3Client(location: S3Location, env: NodeJS.ProcessEnv = process.env): Promise<S3Client> {
  const endpoint = location.endpoint ?? (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined);
  const base = {
    followRegionRedirects: true,
    ...(endpoint === undefined ? {} : { forcePathStyle: true }),
    ...(location.endpoint === undefined ? {} : { endpoint: location.endpoint }),
  };
  const client = new S3Client(base);
  try {
    await client.config.region();
    return client;
  } catch {
    // No region configured anywhere: tritonserver's S3 default; redirects still reach other regions.
    client.destroy();
    return new S3Client({ ...base, region: 'us-east-1' });
  }
}

export class S3Mirror {
  /** The local repository folder the node reads. */
  readonly path: string;
  private readonly store: string;
  private readonly mirrored = new Map<string, MirroredModel>();
  /** Generation folders replaced by the last sync; removed at the next one, so a load reading them finishes. */
  private retired: string[] = [];
  private generation = 0;
  private synced = false;
  private syncing: Promise<void> | undefined;

  private constructor(
    readonly location: S3Location,
    private readonly client: S3Client,
    private readonly root: string,
    private readonly logger: Logger | undefined,
    private readonly listPageSize: number | undefined,
  ) {
    this.path = join(root, 'repository');
    this.store = join(root, 'store');
  }

  static async open(location: S3Location, options: S3MirrorOptions = {}): Promise<S3Mirror> {
    const client = options.client ?? (await createS3Client(location));
    const root = options.cacheDir ?? (await mkdtemp(join(tmpdir(), 'tessera-s3-repository-')));
    const mirror = new S3Mirror(location, client, root, options.logger, options.listPageSize);
    await mkdir(mirror.path, { recursive: true });
    await mkdir(mirror.store, { recursive: true });
    return mirror;
  }

  /**
   * Brings `path` up to date. Concurrent calls share one run. Rejects with a message naming the URL
   * when the listing fails (nothing changes then) or some models could not be downloaded (those keep
   * their previous content; the others are updated).
   */
  sync(): Promise<void> {
    this.syncing ??= this.run().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  async close(): Promise<void> {
    await this.syncing?.catch(() => undefined);
    this.client.destroy();
    await rm(this.root, { recursive: true, force: true });
  }

  private async run(): Promise<void> {
    const retired = this.retired;
    this.retired = [];
    await Promise.all(retired.map((dir) => rm(dir, { recursive: true, force: true })));

    let remote: Map<string, RemoteModel>;
    try {
      remote = await this.list();
    } catch (error) {
      throw new Error(`cannot read model repository ${this.location.url}: ${describeError(error)}`, { cause: error });
    }

    const failures: string[] = [];
    for (const [name, files] of remote) {
      const manifest = [...files]
        .map(([relative, file]) => `${relative}\0${file.etag}\0${file.size}`)
        .sort()
        .join('\n');
      const previous = this.mirrored.get(name);
      if (previous?.manifest === manifest) continue;
      try {
        const dir = await this.stage(name, files, previous);
        await this.swapLink(name, dir);
        this.mirrored.set(name, { manifest, files, dir });
        if (previous) this.retired.push(previous.dir);
      } catch (error) {
        failures.push(`model '${name}': ${describeError(error)}`);
      }
    }
    for (const [name, model] of this.mirrored) {
      if (remote.has(name)) continue;
      await unlink(join(this.path, name)).catch(() => undefined);
      this.mirrored.delete(name);
      this.retired.push(model.dir);
    }
    this.synced = true;
    if (failures.length > 0) {
      throw new Error(`cannot download from model repository ${this.location.url}: ${failures.join('; ')}`);
    }
  }

  /** Every object under the prefix (all pages), grouped by model folder. */
  private async list(): Promise<Map<string, RemoteModel>> {
    const { bucket, prefix } = this.location;
    const models = new Map<string, RemoteModel>();
    let keys = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token, MaxKeys: this.listPageSize }));
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        keys += 1;
        const relative = object.Key.slice(prefix.length);
        const slash = relative.indexOf('/');
        // Files at the repository root are not models; hidden names are skipped as for local repositories.
        if (slash <= 0 || relative.startsWith('.')) continue;
        const name = relative.slice(0, slash);
        const inModel = relative.slice(slash + 1);
        // Keys become local paths: refuse any that would escape the model folder or collide.
        if (inModel !== '' && !safeRelativePath(inModel)) {
          this.logger?.warn(`skipping S3 object with an unusable path: ${object.Key}`, { repository: this.location.url });
          continue;
        }
        let model = models.get(name);
        if (!model) models.set(name, (model = new Map()));
        model.set(inModel, { key: object.Key, etag: object.ETag ?? '', size: object.Size ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    // A local repository that does not exist fails the start; so does a prefix with nothing under it
    // (not even a folder marker), which is most likely a typo. Later, an empty listing just means every
    // model was removed.
    if (keys === 0 && !this.synced) throw new Error(`no objects under s3://${bucket}/${prefix}`);
    return models;
  }

  /** Writes a model into a new generation folder: unchanged files linked from `previous`, others downloaded. */
  private async stage(name: string, files: RemoteModel, previous: MirroredModel | undefined): Promise<string> {
    const dir = join(this.store, `${name}.${++this.generation}`);
    await mkdir(dir, { recursive: true });
    try {
      const entries = [...files];
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < entries.length) {
          const [relative, file] = entries[next++] as [string, RemoteFile];
          if (relative === '' || relative.endsWith('/')) {
            await mkdir(join(dir, relative), { recursive: true }); // a folder marker (empty version folder)
            continue;
          }
          const target = join(dir, relative);
          await mkdir(dirname(target), { recursive: true });
          const old = previous?.files.get(relative);
          if (previous && old && old.etag === file.etag && old.size === file.size) {
            await reuse(join(previous.dir, relative), target);
          } else {
            await this.download(file, target);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(DOWNLOAD_CONCURRENCY, entries.length) }, worker));
      return dir;
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  private async download(file: RemoteFile, target: string): Promise<void> {
    // IfMatch: an object replaced since the listing fails this sync instead of mixing two uploads.
    const response = await this.client.send(
      new GetObjectCommand({ Bucket: this.location.bucket, Key: file.key, ...(file.etag ? { IfMatch: file.etag } : {}) }),
    );
    if (!(response.Body instanceof Readable)) throw new Error(`no body for ${file.key}`);
    await pipeline(response.Body, createWriteStream(target));
    const written = (await stat(target)).size;
    if (written !== file.size) throw new Error(`${file.key}: got ${written} bytes, listed ${file.size}`);
  }

  /** Points `<path>/<name>` at `dir` in one step: a new link renamed over the old one. */
  private async swapLink(name: string, dir: string): Promise<void> {
    const temporary = join(this.path, `.${name}.${this.generation}.link`);
    await rm(temporary, { force: true });
    await symlink(dir, temporary, 'dir');
    await rename(temporary, join(this.path, name));
  }
}

function safeRelativePath(path: string): boolean {
  const segments = path.endsWith('/') ? path.slice(0, -1).split('/') : path.split('/');
  return segments.every((s) => s !== '' && s !== '.' && s !== '..' && !s.includes('\0') && !s.includes('\\'));
}

/** Hard link (same inode, same mtime); a copy with the old times where links are not possible. */
async function reuse(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
  } catch {
    await copyFile(from, to);
    const { atime, mtime } = await stat(from);
    await utimes(to, atime, mtime);
  }
}

/** The S3 error code and message (NoSuchBucket: ..., AccessDenied: ...) or the network error. */
function describeError(error: unknown): string {
  if (error instanceof S3ServiceException) {
    const status = error.$metadata.httpStatusCode;
    return `${error.name}${status ? ` (HTTP ${status})` : ''}: ${error.message}`;
  }
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message || error.name;
  }
  return String(error);
}
