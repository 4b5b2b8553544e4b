/** Load waves: ensembles after the models they name, nested ensembles after their inner ensembles, cycles last. */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadWaves } from './load-order.js';

let repo: string;

async function ensemble(name: string, steps: string[]): Promise<void> {
  const stepText = steps.map((m) => `{ model_name: "${m}" input_map { key: "I" value: "x" } output_map { key: "O" value: "y" } }`);
  await mkdir(join(repo, name), { recursive: true });
  await writeFile(join(repo, name, 'config.pbtxt'), `name: "${name}"\nplatform: "ensemble"\nensemble_scheduling { step [ ${stepText.join(', ')} ] }\n`);
}

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'tessera-waves-'));
  await mkdir(join(repo, 'plain'));
  await writeFile(join(repo, 'plain', 'config.pbtxt'), 'name: "plain"\nbackend: "onnxruntime"\n');
  await mkdir(join(repo, 'unreadable'));
  await writeFile(join(repo, 'unreadable', 'config.pbtxt'), 'this is { not pbtxt');
  await ensemble('outer', ['inner', 'plain']);
  await ensemble('inner', ['plain', 'elsewhere']);
  await ensemble('cycle_a', ['cycle_b']);
  await ensemble('cycle_b', ['cycle_a']);
});

afterAll(() => rm(repo, { recursive: true, force: true }));

describe('loadWaves', () => {
  it('orders models by their ensemble dependencies', async () => {
    const names = ['cycle_a', 'cycle_b', 'inner', 'outer', 'plain', 'unreadable', 'no_folder'];
    expect(await loadWaves(repo, names)).toEqual([
      // A broken or missing config has no dependencies: it loads first and reports its own problem.
      ['plain', 'unreadable', 'no_folder'],
      ['inner'],
      ['outer'],
      ['cycle_a', 'cycle_b'],
    ]);
  });
});
