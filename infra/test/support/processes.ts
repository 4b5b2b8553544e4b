/**
 * Real processes for the live tests: a node agent on ports 0 (ports read from its "tessera-node
 * started" log line), the gateway when its entry exists, and the metric names a /metrics page exposes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from './tools.js';

export interface Started {
  readonly child: ChildProcess;
  readonly output: () => string;
  stop(): Promise<void>;
}

function track(child: ChildProcess): Started {
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function startProcess(command: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Started {
  return track(spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
}

async function until<T>(what: string, started: Started | undefined, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (started && started.child.exitCode !== null) throw new Error(`${what}: the process exited ${started.child.exitCode}:\n${started.output()}`);
    if (Date.now() > deadline) throw new Error(`${what}: gave up after ${timeoutMs} ms\n${started?.output() ?? ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
export { until };

export interface NodeProcess extends Started {
  readonly httpPort: number;
  readonly grpcPort: number;
  readonly metricsPort: number;
}

export interface NodePorts {
  readonly http: number;
  readonly grpc: number;
  readonly metrics: number;
}

/** Ports 0 (free ones, read back from the log) unless given: given ones let a gateway start alongside. */
export async function startNode(modelRepository: string, extraArgs: readonly string[] = [], env: NodeJS.ProcessEnv = {}, ports: NodePorts = { http: 0, grpc: 0, metrics: 0 }): Promise<NodeProcess> {
  const started = startProcess(
    process.execPath,
    [path.join(REPO_ROOT, 'bin/tessera-node.js'), '--model-repository', modelRepository, '--http-port', String(ports.http), '--grpc-port', String(ports.grpc), '--metrics-port', String(ports.metrics), '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', '--metrics-address', '127.0.0.1', ...extraArgs],
    env,
  );
  try {
    const ports = await until('tessera-node start', started, () => {
      for (const line of started.output().split('\n')) {
        if (!line.includes('"tessera-node started"')) continue;
        const fields = JSON.parse(line) as { httpPort: number; grpcPort: number; metricsPort: number };
        return fields;
      }
      return undefined;
    });
    return { ...started, httpPort: ports.httpPort, grpcPort: ports.grpcPort, metricsPort: ports.metricsPort };
  } catch (error) {
    await started.stop();
    throw error;
  }
}

export const GATEWAY_ENTRY = path.join(REPO_ROOT, 'bin/tessera-gateway.js');
export const gatewayRunnable = (): boolean => existsSync(GATEWAY_ENTRY);

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface GatewayProcess extends Started {
  readonly port: number;
}

/** The gateway on loopback with a static fleet of one node and in-process stores (no Redis). */
export async function startGateway(configFile: string, port?: number): Promise<GatewayProcess> {
  port ??= await freePort();
  const started = startProcess(process.execPath, [GATEWAY_ENTRY, '--config', configFile, '--port', String(port)], { REDIS_URL: '' });
  try {
    await until('tessera-gateway start', started, async () => {
      const res = await fetch(`http://127.0.0.1:${port}/v2/health/live`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
      return res?.ok ? true : undefined;
    });
    return { ...started, port };
  } catch (error) {
    await started.stop();
    throw error;
  }
}

/**
 * The series names a Prometheus text exposition declares (from its # TYPE lines, so a family counts
 * even before it has samples), with the _bucket/_sum/_count series of histograms and summaries.
 */
export function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const match of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const [, name = '', type] = match;
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}
