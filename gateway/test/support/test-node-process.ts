/**
 * Test support: a REAL node process (`node bin/tessera-node.js`) on loopback port 0 over a temporary
 * repository holding the `simple` example model and `sleepy`, a typescript-backend model that sleeps
 * INPUT0[0] ms before echoing its input (so tests can hold a request at the node as long as they like).
 * The gateway may not import gpu-node, so the node is driven only through its command line.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const SLEEPY_CONFIG = `name: "sleepy"
backend: "typescript"
default_model_filename: "model.js"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] } ]
`;

const SLEEPY_MODEL = `const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export function initialize() {}
export async function execute(requests) {
  await sleep(Math.max(...requests.map((r) => r.inputs.INPUT0.data[0] ?? 0)));
  return requests.map((r) => ({ outputs: { OUTPUT0: { datatype: 'FP32', shape: [...r.inputs.INPUT0.shape], data: r.inputs.INPUT0.data } } }));
}
`;

export interface NodeProcess {
  readonly grpcAddress: string;
  readonly httpPort: number;
  /** The Prometheus port (scraped by tests that watch the node's queue). */
  readonly metricsPort: number;
  readonly process: ChildProcess;
  /** SIGTERM, then SIGKILL if it lingers; removes the repository. */
  stop(): Promise<void>;
}

export async function writeTestRepository(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-gw-grpc-'));
  await promisify(execFile)(process.execPath, [join(ROOT, 'bin/tessera-models.js'), '--out', dir, '--only', 'simple']);
  await mkdir(join(dir, 'sleepy', '1'), { recursive: true });
  await writeFile(join(dir, 'sleepy', 'config.pbtxt'), SLEEPY_CONFIG);
  await writeFile(join(dir, 'sleepy', '1', 'model.js'), SLEEPY_MODEL);
  await writeFile(join(dir, 'sleepy', '1', 'package.json'), '{ "type": "module" }\n');
  return dir;
}

export interface SpawnedNode {
  readonly process: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  readonly grpcPort: number;
  readonly httpPort: number;
  readonly metricsPort: number;
}

export interface SpawnOptions {
  /** The node's entry script; default bin/tessera-node.js (a production bundle's tessera-node.js also works). */
  readonly entry?: string;
  /** The process environment; default this process's. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Starts `bin/tessera-node.js` over `repository` on loopback, every port 0, and resolves once it
 * logged "tessera-node started" (the bound ports are parsed from that line); rejects with its last
 * log lines if it exits before.
 */
export async function spawnNode(repository: string, extraArgs: readonly string[] = [], options: SpawnOptions = {}): Promise<SpawnedNode> {
  const args = [
    options.entry ?? join(ROOT, 'bin/tessera-node.js'),
    '--model-repository', repository,
    '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0',
    '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', '--metrics-address', '127.0.0.1',
    '--exit-timeout-secs', '1',
    ...extraArgs,
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: options.env ?? process.env });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let log = '';
  const started = await new Promise<{ grpcPort: number; httpPort: number; metricsPort: number }>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      log += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        try {
          const entry = JSON.parse(line) as { msg?: string; grpcPort?: number; httpPort?: number; metricsPort?: number };
          if (entry.msg === 'tessera-node started' && typeof entry.grpcPort === 'number') {
            child.stderr?.off('data', onData);
            child.stderr?.resume(); // keep draining so the node never blocks on a full pipe
            resolve({ grpcPort: entry.grpcPort, httpPort: entry.httpPort ?? 0, metricsPort: entry.metricsPort ?? 0 });
          }
        } catch {
          // not a JSON log line
        }
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`tessera-node exited with ${code} before starting:\n${log.slice(-4000)}`)));
  });
  return { process: child, exited, ...started };
}

/** Starts the node over the test repository (`simple` and `sleepy`); `stop()` also removes the repository. */
export async function startNodeProcess(extraArgs: readonly string[] = []): Promise<NodeProcess> {
  const repository = await writeTestRepository();
  const node = await spawnNode(repository, extraArgs).catch(async (error: unknown) => {
    await rm(repository, { recursive: true, force: true });
    throw error;
  });
  const child = node.process;
  return {
    grpcAddress: `127.0.0.1:${node.grpcPort}`,
    httpPort: node.httpPort,
    metricsPort: node.metricsPort,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await node.exited;
        clearTimeout(timer);
      }
      await rm(repository, { recursive: true, force: true });
    },
  };
}

/** A loopback address where nothing listens (a port just released by the kernel). */
export async function deadAddress(): Promise<string> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(`127.0.0.1:${port}`));
    });
  });
}
