/**
 * CI's build check of the edge Worker: `wrangler deploy --dry-run` bundles src/entry-workers.ts with
 * wrangler.toml exactly as a deploy would (esbuild, nodejs_compat, Durable Object classes, bindings)
 * and uploads nothing. A Node-only import sneaking into the Worker's graph fails here.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');

describe('edge build', () => {
  it('bundles with `wrangler deploy --dry-run`', async () => {
    const outdir = await mkdtemp(join(tmpdir(), 'tessera-edge-build-'));
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [WRANGLER, 'deploy', '--dry-run', '--outdir', outdir, '--config', join(ROOT, 'gateway/wrangler.toml')],
        { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' }, maxBuffer: 16 * 1024 * 1024 },
      );
      expect(stdout).toMatch(/--dry-run: exiting now/);
      expect(stdout).toMatch(/env\.ADMISSION \(AdmissionDO\)/);
      expect(await readdir(outdir)).toContain('entry-workers.js');
    } finally {
      await rm(outdir, { recursive: true, force: true });
    }
  });

  it('`npm run build:edge` writes the bundle to dist/edge/ at the repository root, as the README says', async () => {
    const outdir = join(ROOT, 'dist/edge');
    await rm(outdir, { recursive: true, force: true });
    await promisify(execFile)('npm', ['run', '--silent', 'build:edge'], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true' },
      maxBuffer: 16 * 1024 * 1024,
    });
    expect(await readdir(outdir)).toContain('entry-workers.js');
  });
});
