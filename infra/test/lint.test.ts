/** shellcheck on every shell script in infra/, yamllint on every YAML file. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INFRA, run } from './support/tools.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

const files = filesUnder(INFRA);
// Scripts by extension or by a shell shebang (the fake nvidia-smi has no extension).
const shellScripts = files.filter((f) => f.endsWith('.sh') || /^#!\s*\/(?:usr\/)?bin\/(?:env\s+)?(?:ba|da)?sh\b/.test(readFileSync(f, 'utf8').slice(0, 40)));
const yamlFiles = files.filter((f) => /\.ya?ml$/.test(f));

describe('lint', () => {
  it('finds the scripts and YAML files it lints', () => {
    expect(shellScripts.map((f) => path.relative(INFRA, f))).toEqual(expect.arrayContaining(['docker/build-images.sh', 'test/fixtures/nvidia-smi']));
    expect(yamlFiles.length).toBeGreaterThan(15);
  });

  it('shellcheck passes on every shell script', () => {
    const result = run('shellcheck', ['--severity=style', '--external-sources', ...shellScripts]);
    expect(result.stdout + result.stderr, 'shellcheck findings').toBe('');
    expect(result.status).toBe(0);
  });

  it('yamllint passes on every YAML file', () => {
    const result = run('yamllint', ['--strict', '--format', 'parsable', '--config-file', path.join(INFRA, '.yamllint.yml'), ...yamlFiles]);
    expect(result.stdout + result.stderr, 'yamllint findings').toBe('');
    expect(result.status).toBe(0);
  });
});
