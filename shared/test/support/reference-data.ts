/**
 * Reference data that lives outside the repository (Triton's wire schema, the model-config corpus), in
 * the folder `TESSERA_SHARED_DIR` names, by default `../shared` beside the checkout. A fresh clone has
 * none of it: the tests that use it skip, each with one line saying what is missing and how to supply it,
 * and the project's own fixtures keep the features tested.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SHARED_DIR_ENV = 'TESSERA_SHARED_DIR';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The folder holding `reference/` and `conformance/`. */
export function sharedDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[SHARED_DIR_ENV];
  return configured !== undefined && configured !== '' ? path.resolve(configured) : path.resolve(REPO_ROOT, '..', 'shared');
}

export interface ReferenceData {
  readonly path: string;
  readonly present: boolean;
}

/** `relative` under the shared folder; when it is missing, prints one line naming it (for skipIf). */
export function referenceData(relative: string, usedFor: string, env: NodeJS.ProcessEnv = process.env): ReferenceData {
  const at = path.join(sharedDataDir(env), relative);
  const present = existsSync(at);
  if (!present) {
    console.warn(`[skip] ${usedFor}: ${at} is missing (set ${SHARED_DIR_ENV} to the folder holding reference/ and conformance/)`);
  }
  return { path: at, present };
}
