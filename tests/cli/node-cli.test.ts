/** `bin/tessera-node.js` started the wrong way says what is wrong in our words, not as an errno. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODE = join(ROOT, 'bin/tessera-node.js');

async function start(repository: string): Promise<{ code: number; stderr: string }> {
  const args = [NODE, '--model-repository', repository, '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0'];
  try {
    await promisify(execFile)(process.execPath, args, { cwd: ROOT, timeout: 30_000 });
    return { code: 0, stderr: '' };
  } catch (error) {
    const e = error as { code?: number; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stderr: e.stderr ?? '' };
  }
}

describe('tessera-node --model-repository', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-node-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a missing folder: says it does not exist and how to make one, with no ENOENT/scandir text', async () => {
    const missing = join(dir, 'no-such-repo');
    const { code, stderr } = await start(missing);
    expect(code).toBe(1);
    expect(stderr).toContain(`tessera-node: failed to start: --model-repository '${missing}' does not exist`);
    expect(stderr).toContain('npx tessera-models --out');
    expect(stderr).not.toMatch(/ENOENT|scandir/);
  });

  it('a file instead of a folder: says so', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'x');
    const { code, stderr } = await start(file);
    expect(code).toBe(1);
    expect(stderr).toContain(`--model-repository '${file}' is a file, not a folder of models`);
    expect(stderr).not.toMatch(/ENOTDIR|scandir/);
  });
});
