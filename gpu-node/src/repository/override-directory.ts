/**
 * The load API's `file:<path>` overrides: like Triton, the files are written into a temporary model
 * folder and the model loads from there instead of the repository, with the request's `config` as its
 * config.
 *
 * The keys and the model name come from the network, so nothing here trusts them: the model name must
 * be valid (shared/src/names), each file path is checked by `overrideFilePath` (relative, no `..`, no
 * backslash, no NUL) and must resolve inside the private folder (fs.mkdtemp, mode 0700); files are
 * created exclusively (`wx`), so two keys naming the same file are refused instead of overwriting. On
 * any failure the whole temporary folder is removed before the error is thrown.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve, sep } from 'node:path';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { assertValidModelName, quoteName } from '../../../shared/src/names/index.js';

/** The prefix of a load parameter that carries a file (`file:1/model.onnx`), over HTTP and gRPC alike. */
export const FILE_OVERRIDE_PREFIX = 'file:';

/** The prefix of the temporary folders; tests look for leftovers by it. */
export const OVERRIDE_FOLDER_PREFIX = 'tessera-override-';

export interface OverrideDirectory {
  /** `<temp>/<model>`: use as the model folder of the load. */
  readonly modelPath: string;
  /** Removes the temporary folder once the model loaded from it is gone. */
  remove(): Promise<void>;
}

/**
 * The model-relative path of a `file:<path>` load parameter (HTTP and gRPC alike), normalized
 * (`1//./model.onnx` → `1/model.onnx`); INVALID_ARG naming the key otherwise (see `safeRelativePath`).
 */
export function overrideFilePath(key: string): string {
  if (!key.startsWith(FILE_OVERRIDE_PREFIX)) throw TesseraError.invalidArg(`load parameter ${quoteName(key)} is not a file override`);
  return safeRelativePath(key.slice(FILE_OVERRIDE_PREFIX.length), key);
}

/**
 * Adds the `file:<path>` parameter `key` to `files` under its model-relative path: the one place both
 * the HTTP and the gRPC load requests turn their parameters into files. Two keys naming one file are refused.
 */
export function addFileOverride(files: Map<string, Uint8Array>, key: string, content: Uint8Array): void {
  const path = overrideFilePath(key);
  if (files.has(path)) throw TesseraError.invalidArg(`invalid file override ${quoteName(key)}: another override names the same file`);
  files.set(path, content);
}

/**
 * `raw` normalized, when it is a path relative to the model folder that stays inside it; INVALID_ARG
 * naming `label` for an empty path, an absolute one, a `..` segment, a backslash, NUL or another
 * control character.
 */
export function safeRelativePath(raw: string, label: string): string {
  const refuse = (why: string): never => {
    throw TesseraError.invalidArg(`invalid file override ${quoteName(label)}: ${why}`);
  };
  if (raw === '') refuse('the path is empty');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) refuse('the path contains NUL or a control character');
  if (raw.includes('\\')) refuse("the path contains '\\'");
  if (raw.startsWith('/')) refuse('the path must be relative to the model folder');
  if (raw.split('/').includes('..')) refuse("the path must not contain a '..' segment");
  const clean = posix.normalize(raw).replace(/\/+$/, '');
  if (clean === '' || clean === '.') refuse('the path names the model folder itself');
  return clean;
}

export async function writeOverrideDirectory(
  modelName: string,
  files: ReadonlyMap<string, Uint8Array>,
): Promise<OverrideDirectory> {
  assertValidModelName(modelName);
  const root = await mkdtemp(join(tmpdir(), OVERRIDE_FOLDER_PREFIX));
  const remove = (): Promise<void> => rm(root, { recursive: true, force: true });
  const modelPath = join(root, modelName);
  try {
    await chmod(root, 0o700); // mkdtemp's default already; said explicitly, as the folder holds uploaded code
    await mkdir(modelPath, { mode: 0o700 });
    for (const [relative, content] of files) {
      // Keys are model-relative paths (overrideFilePath of the parameter names), checked again here.
      const clean = safeRelativePath(relative, relative);
      const target = resolve(modelPath, clean);
      if (!target.startsWith(modelPath + sep)) {
        throw TesseraError.invalidArg(`invalid file override ${quoteName(relative)}: it leaves the model folder`);
      }
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await writeFile(target, content, { flag: 'wx', mode: 0o600 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST' || error.code === 'EISDIR') {
          throw TesseraError.invalidArg(`invalid file override ${quoteName(relative)}: another override names the same file`);
        }
        throw error;
      });
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { modelPath, remove };
}
