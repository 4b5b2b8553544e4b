/**
 * Where `--model-repository` points: a local folder, read in place, or a remote repository (s3://)
 * mirrored into a local folder. Either way the repository manager reads `path` as a local repository; a
 * remote source only changes `path` when sync() runs, so its polls are "sync, then scan".
 */
import { access, constants, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import { isRemoteUrl, isS3Url, parseS3Url } from './s3-location.js';

export interface RepositorySource {
  /** What --model-repository named (a path or a URL), for messages. */
  readonly location: string;
  /** The local folder the node reads. */
  readonly path: string;
  /**
   * Folders a model folder under `path` may resolve into through symbolic links: `path` itself, and for
   * a mirror its private cache, whose repository folder links into its store (s3-mirror.ts).
   */
  readonly roots: readonly string[];
  /** True when `path` is a mirror that changes only on sync(). */
  readonly remote: boolean;
  /** Brings `path` up to date with the location; a no-op for a local folder. */
  sync(): Promise<void>;
  /** Releases the source; a mirror's cache folder is removed. */
  close(): Promise<void>;
}

/**
 * Opens the repository at `location`. A remote one is synced once before this resolves, so a missing
 * bucket, denied access or an unreachable endpoint fails here, with the URL in the message.
 */
/** A local repository must be a readable folder; anything else is said in our words, not as an errno. */
async function assertLocalRepository(path: string): Promise<void> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw TesseraError.invalidArg(
        `--model-repository '${path}' does not exist: create it, or write the example models there with \`npx tessera-models --out ${path}\``,
      );
    }
    throw TesseraError.invalidArg(`--model-repository '${path}' cannot be read (${code ?? 'unknown error'})`);
  }
  if (!info.isDirectory()) throw TesseraError.invalidArg(`--model-repository '${path}' is a file, not a folder of models`);
  await access(path, constants.R_OK | constants.X_OK).catch(() => {
    throw TesseraError.invalidArg(`--model-repository '${path}' is not readable by this user`);
  });
}

export async function openRepositorySource(location: string, logger?: Logger): Promise<RepositorySource> {
  if (!isRemoteUrl(location)) {
    await assertLocalRepository(location);
    return { location, path: location, roots: [location], remote: false, sync: async () => undefined, close: async () => undefined };
  }
  if (!isS3Url(location)) {
    throw new Error(`unsupported model repository '${location}': only local folders and s3:// are supported`);
  }
  const parsed = parseS3Url(location);
  // Loaded on demand: nodes with a local repository never pay for the AWS SDK.
  const { S3Mirror } = await import('./s3-mirror.js');
  const mirror = await S3Mirror.open(parsed, logger ? { logger } : {});
  try {
    await mirror.sync();
  } catch (error) {
    await mirror.close();
    throw error;
  }
  logger?.info(`model repository ${location} mirrored`, { path: mirror.path });
  return { location, path: mirror.path, roots: [dirname(mirror.path)], remote: true, sync: () => mirror.sync(), close: () => mirror.close() };
}

export interface RepositoryPolling {
  /** Stops the timer and waits for a poll in progress. */
  stop(): Promise<void>;
}

/**
 * Poll mode over a remote source: every `intervalMs`, sync the mirror, then `scan` it (the model
 * manager's poll). A failed sync is reported and the scan still runs: models are swapped whole, so the
 * mirror holds each model's old or new content, and the old models keep serving.
 */
export function pollRepositorySource(
  source: RepositorySource,
  intervalMs: number,
  scan: () => Promise<void>,
  onError: (message: string) => void,
): RepositoryPolling {
  let running: Promise<void> | undefined;
  const once = async (): Promise<void> => {
    await source.sync().catch((error: unknown) => onError(`failed to sync model repository: ${message(error)}`));
    await scan().catch((error: unknown) => onError(`failed to poll model repository: ${message(error)}`));
  };
  const timer = setInterval(() => {
    running ??= once().finally(() => {
      running = undefined;
    });
  }, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

/**
 * Explicit mode over a remote source: a load reads the repository, so sync first (Triton downloads a
 * cloud model on each load). A failed sync fails nothing by itself: the load then reads the mirror as
 * it is and reports a missing model the usual way.
 */
export function syncBeforeLoads<T extends { loadModel(name: string, ...rest: never[]): Promise<void> }>(
  target: T,
  source: RepositorySource,
  onError: (message: string) => void,
): T {
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      if (property !== 'loadModel') return value.bind(object);
      return async (...args: unknown[]) => {
        await source.sync().catch((error: unknown) => onError(`failed to sync model repository: ${message(error)}`));
        return (value as (...a: unknown[]) => Promise<void>).apply(object, args);
      };
    },
  });
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
