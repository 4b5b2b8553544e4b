/**
 * A real `tessera-node` process for the node-side attack suites: `node bin/tessera-node.js` exactly as
 * the README starts it, every endpoint on 127.0.0.1 port 0, with a private TMPDIR (so a test sees every
 * temporary folder the node creates) and its JSON log lines kept. Its RSS is read from
 * /proc/<pid>/status, which is why these suites need a separate process rather than an in-process node.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServiceError } from '@grpc/grpc-js';
import { waitFor } from '../../../shared/test/support/index.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = join(REPO_ROOT, 'bin', 'tessera-node.js');

export interface LogLine {
  readonly level?: number | string;
  readonly msg?: string;
  readonly [field: string]: unknown;
}

export interface NodeProcess {
  readonly pid: number;
  /** `http://127.0.0.1:<port>` */
  readonly http: string;
  readonly httpPort: number;
  /** `127.0.0.1:<port>` */
  readonly grpcTarget: string;
  /** The node's TMPDIR: override folders appear (and must disappear) here. */
  readonly tmp: string;
  /** Every JSON log line so far. */
  readonly logs: LogLine[];
  /** VmRSS (or VmHWM, the peak) of the process, in bytes. */
  memory(field?: 'VmRSS' | 'VmHWM'): Promise<number>;
  /** Folders the node left in its TMPDIR whose names start with `prefix`. */
  tmpEntries(prefix?: string): Promise<string[]>;
  /** SIGTERM (by this child's PID) and wait for the exit; SIGKILL after 15 s. */
  stop(): Promise<void>;
}

/** Starts the node with `--model-repository repository` plus `extra` flags; resolves once it listens. */
export async function startNodeProcess(repository: string, extra: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<NodeProcess> {
  const tmp = await mkdtemp(join(tmpdir(), 'tessera-sec-tmp-'));
  const args = [
    CLI,
    '--model-repository', repository,
    '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0',
    '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', '--metrics-address', '127.0.0.1',
    '--exit-timeout-secs', '2',
    ...extra,
  ];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env, TMPDIR: tmp, ONNXRUNTIME_NODE_INSTALL: 'skip' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  let stderr = '';
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
    resolve();
  }));
  let pending = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        // not a log line (a warning printed by node itself)
      }
    }
  });
  child.stdout?.resume();
  const started = await waitFor(() => logs.find((line) => line.msg === 'tessera-node started') ?? (exited ? 'exited' : undefined), {
    timeoutMs: 60_000,
    what: 'tessera-node started',
  }).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
  if (started === 'exited') throw new Error(`tessera-node exited at start: ${stderr}`);
  const httpPort = started.httpPort as number;
  const pid = child.pid as number;
  return {
    pid,
    http: `http://127.0.0.1:${httpPort}`,
    httpPort,
    grpcTarget: `127.0.0.1:${started.grpcPort as number}`,
    tmp,
    logs,
    async memory(field = 'VmRSS') {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
      if (match === null) throw new Error(`no ${field} in /proc/${pid}/status`);
      return Number(match[1]) * 1024;
    },
    async tmpEntries(prefix = '') {
      return (await readdir(tmp)).filter((name) => name.startsWith(prefix));
    },
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exit;
        clearTimeout(timer);
      }
      await rm(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * A TypeScript-backend model: `initialize` writes `marker` (so a test sees whether its code ever ran),
 * `execute` doubles INPUT0. Returned as the files of its folder, for the disk or for `file:` overrides.
 */
export function scriptModel(name: string, marker: string): { config: Record<string, unknown>; configText: string; files: Record<string, string> } {
  const source = [
    "import { writeFileSync } from 'node:fs';",
    `export function initialize() { writeFileSync(${JSON.stringify(marker)}, 'ran'); }`,
    'export async function execute(requests) {',
    '  return requests.map((r) => ({',
    "    outputs: { OUTPUT0: { datatype: 'FP32', shape: [...r.inputs.INPUT0.shape], data: r.inputs.INPUT0.data.map((x) => x * 2) } },",
    '  }));',
    '}',
    '',
  ].join('\n');
  const config = {
    name,
    backend: 'typescript',
    default_model_filename: 'model.js',
    max_batch_size: 8,
    input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
    output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] }],
  };
  const configText = [
    `name: "${name}"`,
    'backend: "typescript"',
    'default_model_filename: "model.js"',
    'max_batch_size: 8',
    'input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    'output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]',
    '',
  ].join('\n');
  return { config, configText, files: { '1/model.js': source, '1/package.json': '{"type":"module"}\n' } };
}

/** Writes `scriptModel(name, marker)` as `<parent>/<folder>` (config.pbtxt and version 1). */
export async function writeScriptModelFolder(parent: string, folder: string, name: string, marker: string): Promise<void> {
  const model = scriptModel(name, marker);
  await mkdir(join(parent, folder, '1'), { recursive: true });
  await writeFile(join(parent, folder, 'config.pbtxt'), model.configText);
  for (const [path, content] of Object.entries(model.files)) await writeFile(join(parent, folder, path), content);
}

/** The Triton load body: `config` as JSON text and each file as `file:<path>` in base64. */
export function loadBody(config: Record<string, unknown>, files: Record<string, string>): string {
  const parameters: Record<string, string> = { config: JSON.stringify(config) };
  for (const [path, content] of Object.entries(files)) parameters[path.startsWith('file:') ? path : `file:${path}`] = Buffer.from(content).toString('base64');
  return JSON.stringify({ parameters });
}

/** A plain HTTP call whose path is sent exactly as given (no URL normalization of `..`). */
export async function rawCall(
  base: string,
  method: string,
  path: string,
  options: { body?: string | Uint8Array; headers?: Record<string, string> } = {},
): Promise<{ status: number; text: string }> {
  const { request } = await import('node:http');
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body === undefined ? undefined : Buffer.from(options.body));
  });
}

/** A suite's scratch folder: `base` holds `repo` (the model repository) and whatever the suite adds. */
export interface Workspace {
  readonly base: string;
  readonly repo: string;
  remove(): Promise<void>;
}

/**
 * A fresh workspace whose repository holds the script model `good` (its marker `<base>/good-ran`) and,
 * with `badlyNamedFolder`, a model folder named `bad\name`, which no model name may be.
 */
export async function securityWorkspace(prefix: string, options: { badlyNamedFolder?: boolean } = {}): Promise<Workspace> {
  const base = await mkdtemp(join(tmpdir(), prefix));
  const repo = join(base, 'repo');
  await mkdir(repo);
  await writeScriptModelFolder(repo, 'good', 'good', join(base, 'good-ran'));
  if (options.badlyNamedFolder) await writeScriptModelFolder(repo, 'bad\\name', 'bad\\name', join(base, 'bad-ran'));
  return { base, repo, remove: () => rm(base, { recursive: true, force: true }) };
}

/** The error a gRPC call failed with; fails the test when it succeeded. */
export async function grpcFailure(promise: Promise<unknown>): Promise<ServiceError> {
  return (await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  )) as ServiceError;
}
