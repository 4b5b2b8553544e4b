/**
 * A private redis-server for integration tests: one process per suite on a free loopback port,
 * without persistence, that a test can stop, restart on the same port, or SIGKILL to simulate an
 * outage. Redis cannot listen on port 0, so we ask the kernel for a free port (bind a server to
 * :0, read the port, close it) and retry with a new one if another process takes it meanwhile.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';

export interface RedisServerOptions {
  /** The binary; default `$REDIS_SERVER_BIN` or else `redis-server` on PATH. */
  readonly binary?: string;
  /** How long to wait for PING to answer after spawning; default 10000 ms. */
  readonly startTimeoutMs?: number;
  /** Extra command-line arguments, e.g. `['--maxmemory', '10mb']`; default none. */
  readonly extraArgs?: readonly string[];
  /** Ports to try first, from this one up (a bench keeping to its own range); default: free ports the kernel names. */
  readonly portFrom?: number;
}

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Whether the process is running now. */
  readonly running: boolean;
  /** SIGTERM and wait for the exit; a no-op when not running. */
  stop(): Promise<void>;
  /** SIGKILL and wait for the exit: the crash of Redis as clients see it. */
  kill(): Promise<void>;
  /** Stops if running, then starts again on the same port (with an empty dataset: no persistence). */
  restart(): Promise<void>;
}

const HOST = '127.0.0.1';
const PORT_ATTEMPTS = 5;
const PING_RETRY_MS = 25;

/** Starts redis-server; throws a clear error when the binary is missing or it does not come up. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = options.binary ?? process.env.REDIS_SERVER_BIN ?? 'redis-server';
  const startTimeoutMs = options.startTimeoutMs ?? 10_000;
  const extraArgs = options.extraArgs ?? [];

  let lastError: unknown;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = options.portFrom === undefined ? await freePort() : options.portFrom + attempt;
    try {
      const child = await spawnRedis(binary, port, extraArgs, startTimeoutMs);
      return new RedisServerHandle(binary, port, extraArgs, startTimeoutMs, child);
    } catch (error) {
      if (error instanceof MissingBinaryError) throw error;
      lastError = error; // most likely the port was taken between freePort() and the bind: try another
    }
  }
  throw new Error(`could not start redis-server after ${PORT_ATTEMPTS} attempts`, { cause: lastError });
}

class MissingBinaryError extends Error {
  override readonly name = 'MissingBinaryError';
}

/** Children still running when the test process exits are killed, so no redis-server outlives its suite. */
const liveChildren = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of liveChildren) child.kill('SIGKILL');
});

class RedisServerHandle implements RedisServer {
  readonly host = HOST;
  readonly url: string;

  constructor(
    private readonly binary: string,
    readonly port: number,
    private readonly extraArgs: readonly string[],
    private readonly startTimeoutMs: number,
    private child: ChildProcess | undefined,
  ) {
    this.url = `redis://${HOST}:${port}`;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  stop(): Promise<void> {
    return this.signal('SIGTERM');
  }

  kill(): Promise<void> {
    return this.signal('SIGKILL');
  }

  async restart(): Promise<void> {
    await this.stop();
    this.child = await spawnRedis(this.binary, this.port, this.extraArgs, this.startTimeoutMs);
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    this.child = undefined;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill(signal);
      await exited;
    }
    liveChildren.delete(child);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port from the kernel'))));
    });
  });
}

async function spawnRedis(binary: string, port: number, extraArgs: readonly string[], timeoutMs: number): Promise<ChildProcess> {
  const args = [
    '--port', String(port),
    '--bind', HOST,
    // No RDB snapshots nor AOF: tests want an empty, disposable dataset and no files left behind.
    '--save', '',
    '--appendonly', 'no',
    '--dir', tmpdir(),
    '--daemonize', 'no',
    '--loglevel', 'warning',
    ...extraArgs,
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  liveChildren.add(child);
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      liveChildren.delete(child);
      reject(
        error.code === 'ENOENT'
          ? new MissingBinaryError(
              `redis-server not found (tried ${JSON.stringify(binary)}): install Redis 7 (apt-get install redis-server) or set REDIS_SERVER_BIN`,
            )
          : error,
      );
    });
    child.once('exit', (code, signal) => {
      liveChildren.delete(child);
      reject(new Error(`redis-server exited during startup (code ${code}, signal ${signal}) on port ${port}: ${output.trim()}`));
    });
  });
  failed.catch(() => {}); // observed below; also keeps a later exit from being an unhandled rejection
  try {
    await Promise.race([failed, waitForPing(port, timeoutMs)]);
  } catch (error) {
    child.kill('SIGKILL');
    liveChildren.delete(child);
    throw error;
  }
  child.removeAllListeners('exit');
  child.removeAllListeners('error');
  child.on('error', () => {});
  child.once('exit', () => liveChildren.delete(child));
  return child;
}

async function waitForPing(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ping(port)) return;
    await new Promise((resolve) => setTimeout(resolve, PING_RETRY_MS));
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`);
}

/** One inline PING over a raw socket: true when the answer is +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: HOST, port });
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}
