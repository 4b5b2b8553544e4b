/**
 * `bin/tessera-gateway.js` as people first meet it: `--help` names every option with its default, and
 * a config that does not validate is told on stderr as plain lines, one problem per line.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GATEWAY = join(ROOT, 'bin/tessera-gateway.js');

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.REDIS_URL;
  delete env.TESSERA_JOBS_WORKER;
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [GATEWAY, ...args], { cwd: ROOT, env, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('tessera-gateway CLI', () => {
  it('--help lists --jobs-worker / TESSERA_JOBS_WORKER and the default port', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--jobs-worker/);
    expect(stdout).toMatch(/TESSERA_JOBS_WORKER/);
    expect(stdout).toMatch(/--port N .*default 8080/);
  });

  it('prints config errors to stderr as plain lines, not \\n-escaped inside a JSON line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-gw-cli-'));
    try {
      const path = join(dir, 'gateway.json');
      await writeFile(path, JSON.stringify({ port: 'eighty', tenants: [{ id: 'x', tier: 'nope', keys: [] }] }));
      const { code, stderr } = await run(['--config', path, '--port', '0']);
      expect(code).toBe(1);
      const plain = stderr.split('\n').filter((line) => line !== '' && !line.startsWith('{'));
      expect(plain[0]).toBe('tessera-gateway: failed to start:');
      expect(plain.some((line) => line.includes('$.port'))).toBe(true);
      expect(plain.some((line) => line.includes('nope'))).toBe(true);
      // The JSON log line (for collectors) carries no escaped newline.
      expect(stderr.split('\n').filter((line) => line.startsWith('{')).every((line) => !line.includes('\\n'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
