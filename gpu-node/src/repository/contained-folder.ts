/**
 * A model folder the node loads must lie inside the model repository once every symbolic link is
 * resolved: a link (or a name) that leads elsewhere would let whoever can name a model load, and so
 * run, files the operator never put in the repository. Links inside the repository still work, as
 * tritonserver allows repositories assembled from links.
 */
import { realpath } from 'node:fs/promises';
import { sep } from 'node:path';
import { TesseraError } from '../../../shared/src/errors/index.js';
import { quoteName } from '../../../shared/src/names/index.js';

/**
 * `folder` itself when its real path is inside the real path of one of `roots`; INVALID_ARG naming the
 * model otherwise. A folder that does not exist is left to the caller's reading, which reports it.
 */
export async function assertInsideRoots(folder: string, roots: readonly string[], modelName: string): Promise<void> {
  let real: string;
  try {
    real = await realpath(folder);
  } catch {
    return;
  }
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => undefined);
    if (realRoot !== undefined && real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) return;
  }
  throw TesseraError.invalidArg(`failed to load ${quoteName(modelName)}: its model folder resolves outside the model repository`);
}
