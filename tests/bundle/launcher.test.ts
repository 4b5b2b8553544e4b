// bin/launch.js: a bin/ command runs the production bundle when it is there and current, else the sources.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** Runs bin/tessera-models.js --help with the bundle folder given, outside the suite's TESSERA_FROM_SOURCE. */
async function modelsHelp(bundleDir: string, fromSource?: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, TESSERA_BUNDLE_DIR: bundleDir };
  delete env.TESSERA_FROM_SOURCE;
  if (fromSource !== undefined) env.TESSERA_FROM_SOURCE = fromSource;
  return run(process.execPath, [join(ROOT, 'bin/tessera-models.js'), '--help'], { cwd: ROOT, env });
}

describe('bin/ launchers', () => {
  let bundle: string;
  beforeEach(async () => {
    bundle = await mkdtemp(join(tmpdir(), 'tessera-launch-'));
    // A stand-in bundle that says where it ran from; the real one is built in production-bundle.test.ts.
    await writeFile(join(bundle, 'tessera-models.js'), "process.stdout.write('ran the bundle\\n');\n");
  });
  afterEach(() => rm(bundle, { recursive: true, force: true }));

  it('run the bundle when no source changed since it was built', async () => {
    await writeFile(join(bundle, 'build-info.json'), JSON.stringify({ builtAtMs: Date.now(), sources: ['bin/launch.js', 'gone/file.ts'] }));
    const old = new Date(Date.now() - 60_000);
    await utimes(join(ROOT, 'bin/launch.js'), old, old);
    const { stdout, stderr } = await modelsHelp(bundle);
    expect(stdout).toBe('ran the bundle\n');
    expect(stderr).toBe('');
  });

  it('run the sources, saying why, when a source is newer than the bundle', async () => {
    await writeFile(join(bundle, 'build-info.json'), JSON.stringify({ builtAtMs: Date.now() - 60_000, sources: ['bin/tessera-models.js'] }));
    const now = new Date();
    await utimes(join(ROOT, 'bin/tessera-models.js'), now, now);
    const { stdout, stderr } = await modelsHelp(bundle);
    expect(stdout).toMatch(/^Usage: tessera-models --out DIR/);
    expect(stderr).toBe('tessera-models: bin/tessera-models.js changed after the last build; running from source (npm run build refreshes dist/)\n');
  });

  it('run the sources when told to, or when the bundle has no build record', async () => {
    await writeFile(join(bundle, 'build-info.json'), JSON.stringify({ builtAtMs: Date.now(), sources: [] }));
    expect((await modelsHelp(bundle, '1')).stdout).toMatch(/^Usage: tessera-models/);
    await rm(join(bundle, 'build-info.json'));
    expect((await modelsHelp(bundle)).stdout).toMatch(/^Usage: tessera-models/);
  });
});
