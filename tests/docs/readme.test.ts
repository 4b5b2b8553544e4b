/**
 * The README against the code it describes, for what drifted before: the example models, the S3
 * endpoint variable, the test prerequisites and their apt line, the demo key, where build:edge writes,
 * and files that must stay out of git.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_MODEL_NAMES } from '../../gpu-node/src/example-models/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe('README', () => {
  it('names every example model tessera-models writes, and how many', () => {
    for (const name of EXAMPLE_MODEL_NAMES) expect(README, name).toContain(`\`${name}\``);
    const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty', 'twenty-one', 'twenty-two', 'twenty-three', 'twenty-four'];
    expect(README).toContain(`example repository, ${words[EXAMPLE_MODEL_NAMES.length]} models`);
  });

  it('names the S3 endpoint variable the node reads first', () => {
    expect(README).toContain('AWS_ENDPOINT_URL_S3');
  });

  it("lists the suite's tools with one apt line, and says why ONNXRUNTIME_NODE_INSTALL=skip", () => {
    const apt = /apt-get install -y ([^\n]+)/.exec(README)?.[1] ?? '';
    for (const pkg of ['redis-server', 'prometheus', 'shellcheck', 'yamllint', 'librsvg2-bin', 'kubernetes-client']) expect(apt).toContain(pkg);
    expect(README).toMatch(/terraform/);
    expect(README).toContain('ONNXRUNTIME_NODE_INSTALL=skip');
  });

  it('explains $DEMO_KEY before using it', () => {
    const defined = README.indexOf('export DEMO_KEY=');
    expect(defined).toBeGreaterThan(-1);
    expect(defined).toBeLessThan(README.indexOf('$DEMO_KEY'));
  });

  it('says where build:edge writes, and package.json writes there', () => {
    expect(README).toContain('dist/edge/');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['build:edge']).toContain('$PWD/dist/edge');
  });

  it('keeps Terraform lock files and state out of git', () => {
    for (const path of ['terraform/examples/aws/.terraform.lock.hcl', 'terraform/modules/x/.terraform/providers', 'terraform/terraform.tfstate']) {
      expect(() => execFileSync('git', ['check-ignore', '-q', path], { cwd: ROOT }), path).not.toThrow();
    }
  });

  it('pins dev tools whose engines accept Node 20, which package.json supports (no EBADENGINE on install)', () => {
    for (const name of ['@bufbuild/protoc-gen-es', '@bufbuild/protobuf']) {
      const engines = (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines;
      const minimum = Number(/>=\s*(\d+)/.exec(engines?.node ?? '>=0')?.[1] ?? 0);
      expect(minimum, `${name} engines ${engines?.node}`).toBeLessThanOrEqual(20);
    }
  });

  it('has no .npmrc with keys npm does not know (it warned on every npm command)', () => {
    expect(() => readFileSync(join(ROOT, '.npmrc'), 'utf8')).toThrow();
  });
});
