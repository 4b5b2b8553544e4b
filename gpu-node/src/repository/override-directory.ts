/**
 * The load API's `file:<version>/<name>` overrides: Triton writes them into a temporary model folder and
 * loads the model from there instead of the repository, with the request's `config` as its config.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, sep } from 'node:path';
import { TesseraError } from '../../../shared/src/errors/index.js';

export interface OverrideDirectory {
  /** `<temp>/<model>`: use as the model folder of the load. */
  readonly modelPath: string;
  /** Removes the temporary folder once the model loaded from it is gone. */
  remove(): Promise<void>;
}

export async function writeOverrideDirectory(
  modelName: string,
  files: ReadonlyMap<string, Uint8Array>,
): Promise<OverrideDirectory> {
  const root = await mkdtemp(join(tmpdir(), 'tessera-override-'));
  const modelPath = join(root, modelName);
  try {
    await mkdir(modelPath, { recursive: true });
    for (const [relative, content] of files) {
      // Keys arrive from the network: refuse anything that would escape the model folder.
      const clean = normalize(relative);
      if (clean.startsWith('..') || clean.startsWith(sep) || clean === '.' || relative.includes('\0')) {
        throw TesseraError.invalidArg(`invalid file override path '${relative}' for model '${modelName}'`);
      }
      const target = join(modelPath, clean);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return { modelPath, remove: () => rm(root, { recursive: true, force: true }) };
}
