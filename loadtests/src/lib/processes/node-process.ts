/**
 * Starts `bin/tessera-node.js` as a child process (the node under test must not share the bench's CPU
 * accounting or event loop), on ports chosen by the OS (0), and learns the ports from its JSON log line
 * `"msg":"tessera-node started"`. Stopping sends SIGTERM, the node's graceful shutdown.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { logLineFields } from './server-process.js';
import { pinnedCommand } from '../per-core/index.js';

const NODE_BIN = fileURLToPath(new URL('../../../../bin/tessera-node.js', import.meta.url));
const STARTED_MSG = 'tessera-node started';

export interface NodePorts {
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly metricsPort: number;
}

export interface RunningNode extends NodePorts {
  readonly pid: number;
  readonly httpBase: string;
  /** The node's last log lines, for error reports. */
  recentLog(): string[];
  stop(): Promise<void>;
}

export interface LaunchOptions {
  readonly modelRepository: string;
  readonly extraArgs?: readonly string[];
  readonly startTimeoutMs?: number;
  /** Run the node on this core alone (taskset), where the machine allows it. */
  readonly pinCore?: number;
  /** Flags for node itself, before the script, e.g. `--cpu-prof`. */
  readonly nodeFlags?: readonly string[];
  /** Receives the node's stdout line by line (e.g. `--trace-gc-nvp` output); ignored when absent. */
  readonly onStdoutLine?: (line: string) => void;
}

/** The ports from a "started" log line, or undefined for any other line (including non-JSON ones). */
export function parseStartedLine(line: string): NodePorts | undefined {
  const fields = logLineFields(line, STARTED_MSG);
  if (fields === undefined) return undefined;
  const port = (key: string): number => (typeof fields[key] === 'number' ? (fields[key] as number) : 0);
  return { httpPort: port('httpPort'), grpcPort: port('grpcPort'), metricsPort: port('metricsPort') };
}

export function launchNode(options: LaunchOptions): Promise<RunningNode> {
  const args = [
    ...(options.nodeFlags ?? []),
    NODE_BIN,
    '--model-repository',
    options.modelRepository,
    '--http-port',
    '0',
    '--grpc-port',
    '0',
    '--metrics-port',
    '0',
    '--http-address',
    '127.0.0.1',
    '--grpc-address',
    '127.0.0.1',
    '--metrics-address',
    '127.0.0.1',
    ...(options.extraArgs ?? []),
  ];
  const [command, commandArgs] =
    options.pinCore === undefined ? [process.execPath, args] : pinnedCommand(options.pinCore, process.execPath, args);
  const child = spawn(command, commandArgs, { stdio: ['ignore', options.onStdoutLine === undefined ? 'ignore' : 'pipe', 'pipe'] });
  if (options.onStdoutLine !== undefined && child.stdout !== null) createInterface({ input: child.stdout }).on('line', options.onStdoutLine);
  const log: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  return new Promise<RunningNode>((resolve, reject) => {
    let started = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`tessera-node did not start within ${options.startTimeoutMs ?? 120_000} ms:\n${log.join('\n')}`));
    }, options.startTimeoutMs ?? 120_000);

    createInterface({ input: child.stderr as NonNullable<typeof child.stderr> }).on('line', (line) => {
      log.push(line);
      if (log.length > 50) log.shift();
      const ports = started ? undefined : parseStartedLine(line);
      if (ports === undefined) return;
      started = true;
      clearTimeout(timer);
      resolve({
        ...ports,
        pid: child.pid as number,
        httpBase: `http://127.0.0.1:${ports.httpPort}`,
        recentLog: () => [...log],
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          await exited;
          clearTimeout(killer);
        },
      });
    });
    void exited.then((code) => {
      if (started) return;
      clearTimeout(timer);
      reject(new Error(`tessera-node exited (code ${code}) before it started:\n${log.join('\n')}`));
    });
  });
}

/** Waits until `GET /v2/models/{m}/ready` answers 200. */
export async function waitForModelReady(httpBase: string, model: string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last = '';
  while (performance.now() < deadline) {
    try {
      const response = await fetch(`${httpBase}/v2/models/${encodeURIComponent(model)}/ready`);
      await response.arrayBuffer();
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`model '${model}' not ready after ${timeoutMs} ms (${last})`);
}
