import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from './cli.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-models-cli-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(args, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe('tessera-models CLI', () => {
  it('prints usage with the model list for --help and exits 0', async () => {
    const { code, out } = await run(['--help']);
    expect(code).toBe(0);
    expect(out).toMatch(/^Usage: tessera-models --out DIR/);
    expect(out).toContain('mlp_large');
  });

  it.each([[['--bogus']], [['--out']], [[]], [['--out', dir, 'extra']], [['--out', dir, '--only', 'simple,nope']]])(
    'exits 2 with usage for %j',
    async (args) => {
      const { code, err } = await run(args);
      expect(code).toBe(2);
      expect(err).toContain('Usage: tessera-models');
    },
  );

  it('writes only the models named in --only', async () => {
    const { code, out } = await run(['--out', dir, '--only', 'simple, simple_identity']);
    expect(code).toBe(0);
    expect(out).toContain(join(dir, 'simple_identity'));
    expect((await readdir(dir)).sort()).toEqual(['simple', 'simple_identity']);
  });

  it('runs through the bin launcher, which exits 2 on an unknown flag', async () => {
    const bin = fileURLToPath(new URL('../../../bin/tessera-models.js', import.meta.url));
    const exit = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, [bin, '--nope'], (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number | null), stderr }),
      );
    });
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain("Unknown option '--nope'");
  });
});
