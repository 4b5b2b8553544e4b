/**
 * The order models load in when many load at once (startup, a repository poll): an ensemble loads
 * only after the models its steps name, as Triton's dependency graph does, because an ensemble checks
 * its composing models when it loads. Models come in waves: each wave's models depend only on models
 * of earlier waves, and a wave loads (with the manager's usual concurrency) once the previous one has
 * settled. Waiting this way, rather than an ensemble waiting inside its own load, cannot deadlock the
 * manager's limited load slots.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isEnsemble, parseModelConfigText } from '../../../shared/src/model-config/index.js';
import { CONFIG_FILE_NAME } from '../repository/model-directory.js';

/** The models named by an ensemble's steps; none for other models or an unreadable config (its load reports that). */
export async function ensembleDependencies(modelPath: string): Promise<string[]> {
  const path = join(modelPath, CONFIG_FILE_NAME);
  try {
    const config = parseModelConfigText(await readFile(path, 'utf8'), path);
    const scheduling = config.schedulingChoice;
    if (!isEnsemble(config) || scheduling.case !== 'ensembleScheduling') return [];
    return [...new Set(scheduling.value.step.map((step) => step.modelName))];
  } catch {
    return [];
  }
}

/**
 * `names` split into waves. Dependencies outside `names` are ignored (they are loaded already, or the
 * ensemble's load will say they are missing); models in a dependency cycle come last, where their
 * loads fail with the reason.
 */
export async function loadWaves(repositoryPath: string, names: readonly string[]): Promise<string[][]> {
  const wanted = new Set(names);
  const dependencies = new Map<string, string[]>();
  await Promise.all(
    names.map(async (name) => {
      const deps = await ensembleDependencies(join(repositoryPath, name));
      dependencies.set(name, deps.filter((dep) => dep !== name && wanted.has(dep)));
    }),
  );
  const waves: string[][] = [];
  const placed = new Set<string>();
  let left = [...names];
  while (left.length > 0) {
    const wave = left.filter((name) => (dependencies.get(name) ?? []).every((dep) => placed.has(dep)));
    if (wave.length === 0) {
      waves.push(left);
      break;
    }
    wave.forEach((name) => placed.add(name));
    waves.push(wave);
    left = left.filter((name) => !placed.has(name));
  }
  return waves;
}
