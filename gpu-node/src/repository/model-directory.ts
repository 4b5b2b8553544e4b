/**
 * Reads one model folder of a local repository as it is right now: its config.pbtxt text, its numeric
 * version folders, and a fingerprint per version (config text + every file's path, size and mtime) so
 * that polling can tell which versions changed without reading model files.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseVersionFolder } from './version-policy.js';

export const CONFIG_FILE_NAME = 'config.pbtxt';

export interface ModelDirectory {
  readonly name: string;
  /** `<repository>/<model>` */
  readonly path: string;
  /** `<path>/config.pbtxt` */
  readonly configPath: string;
  /** The config.pbtxt text; undefined when the folder has none (allowed only with auto-complete). */
  readonly configText: string | undefined;
  /** Numeric version folders found, ascending. */
  readonly versions: readonly number[];
  /** Per version: changes when the config or any file of the model outside other versions changes. */
  readonly fingerprints: ReadonlyMap<number, string>;
  /** Changes when anything of the model changes, version folders added or removed included. */
  readonly fingerprint: string;
}

interface FileStamp {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/**
 * Model folder names of a repository (sub-directories, hidden ones skipped), sorted. Symbolic links to
 * folders count, as they do for tritonserver: repositories are often assembled from links.
 */
export async function listModelNames(repositoryPath: string): Promise<string[]> {
  const entries = await readdir(repositoryPath, { withFileTypes: true });
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    if (entry.isDirectory() || (entry.isSymbolicLink() && (await isDirectory(join(repositoryPath, entry.name))))) {
      names.push(entry.name);
    }
  }
  return names.sort();
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

export async function readModelDirectory(modelPath: string, name: string): Promise<ModelDirectory> {
  const configPath = join(modelPath, CONFIG_FILE_NAME);
  const configText = await readFile(configPath, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  const entries = await readdir(modelPath, { withFileTypes: true });
  const versions: number[] = [];
  const shared: FileStamp[] = [];
  const perVersion = new Map<number, FileStamp[]>();
  for (const entry of entries) {
    const version = entry.isDirectory() ? parseVersionFolder(entry.name) : undefined;
    if (version !== undefined) {
      versions.push(version);
      perVersion.set(version, await stampTree(join(modelPath, entry.name), entry.name));
    } else if (entry.name !== CONFIG_FILE_NAME) {
      // Label files and other model-level files affect every version.
      shared.push(...(await stampTree(join(modelPath, entry.name), entry.name)));
    }
  }
  versions.sort((a, b) => a - b);
  const fingerprints = new Map<number, string>();
  for (const version of versions) {
    const hash = createHash('sha256');
    hash.update(configText ?? '\0no-config');
    for (const file of [...shared, ...(perVersion.get(version) ?? [])]) {
      hash.update(`\n${file.path}\0${file.size}\0${file.mtimeMs}`);
    }
    fingerprints.set(version, hash.digest('hex'));
  }
  const whole = createHash('sha256').update(configText ?? '\0no-config');
  for (const [version, print] of fingerprints) whole.update(`\n${version}\0${print}`);
  return { name, path: modelPath, configPath, configText, versions, fingerprints, fingerprint: whole.digest('hex') };
}

/** Size and mtime of every file under `path` (or of `path` itself), with paths relative to the model. */
async function stampTree(path: string, relative: string): Promise<FileStamp[]> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return [];
  if (!info.isDirectory()) return [{ path: relative, size: info.size, mtimeMs: info.mtimeMs }];
  const stamps: FileStamp[] = [];
  const names = (await readdir(path)).sort();
  for (const name of names) stamps.push(...(await stampTree(join(path, name), `${relative}/${name}`)));
  return stamps;
}
