/**
 * The external tools the infra tests drive, found on the PATH. A missing tool fails the test with the
 * apt package that provides it: these checks are only worth something when the real tool runs.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const INFRA = path.join(REPO_ROOT, 'infra');

/** Tool → the Debian package that installs it. */
const PACKAGES: Record<string, string> = {
  promtool: 'prometheus',
  prometheus: 'prometheus',
  kubectl: 'kubectl (1.21 or later; Debian 12 kubernetes-client is 1.20 with a Kustomize too old for overlays)',
  shellcheck: 'shellcheck',
  yamllint: 'yamllint',
  python3: 'python3-yaml',
};

export function requireTool(name: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const location = found.stdout.trim();
  if (found.status !== 0 || location === '') {
    throw new Error(`'${name}' is not installed: apt-get install -y ${PACKAGES[name] ?? name}`);
  }
  return location;
}

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a tool to completion (after requireTool), from the repository root unless told otherwise. */
export function run(tool: string, args: readonly string[], options: { cwd?: string; input?: string } = {}): RunResult {
  requireTool(tool);
  const result = spawnSync(tool, args, {
    cwd: options.cwd ?? REPO_ROOT,
    input: options.input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `run` that fails with the tool's own output when it exits non-zero. */
export function runOk(tool: string, args: readonly string[], options: { cwd?: string; input?: string } = {}): string {
  const result = run(tool, args, options);
  if (result.status !== 0) {
    throw new Error(`${tool} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}
