/**
 * Where a scenario's results go: `loadtests/results/<YYYY-MM-DD>/<scenario>.{json,csv}` (the local
 * date of the run, so a day's runs sit together and a rerun the same day replaces its files).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_RESULTS_ROOT = fileURLToPath(new URL('../../../results', import.meta.url));

export function localDate(date: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

export async function writeResults(
  root: string,
  scenario: string,
  date: Date,
  json: unknown,
  csv: string,
): Promise<{ json: string; csv: string }> {
  const dir = join(root, localDate(date));
  await mkdir(dir, { recursive: true });
  const paths = { json: join(dir, `${scenario}.json`), csv: join(dir, `${scenario}.csv`) };
  // NaN (nothing measured) becomes null in JSON, which is what JSON.stringify does anyway; said here
  // so readers of the file know null means "not measured", not zero.
  await writeFile(paths.json, `${JSON.stringify(json, null, 2)}\n`);
  await writeFile(paths.csv, csv);
  return paths;
}
