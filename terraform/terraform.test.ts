// Runs terraform/check.sh (fmt, offline init against the local provider mirror, validate, `terraform test`
// with a mocked AWS provider, shellcheck of the rendered node user data) and expects it to exit 0.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const hasTerraform = spawnSync('terraform', ['version'], { stdio: 'ignore' }).status === 0;
const title = 'terraform/check.sh passes: fmt -check, offline init, validate, terraform test for every module and the example';

describe('terraform/', () => {
  if (!hasTerraform) {
    it.skip(`${title} (skipped: terraform is not on the PATH; CI has it)`, () => {});
    return;
  }

  it(title, () => {
    const result = spawnSync('bash', [join(here, 'check.sh')], { encoding: 'utf8', timeout: 540_000 });
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
    expect(result.error, output).toBeUndefined();
    expect(result.status, output).toBe(0);
  }, 600_000);
});
