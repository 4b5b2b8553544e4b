/**
 * Starts a server as a child process (so it has its own event loop and CPU accounting, not the load
 * generator's) and learns its port from the JSON log line it writes when it listens, as
 * node-process.ts does for tessera-node. Used for the gateway (`"msg":"tessera-gateway started",
 * "port":N`) and the bench's bare Hono server, which print such lines on stderr or stdout.
 * Stopping sends SIGTERM (the servers' graceful shutdown), then SIGKILL after `killAfterMs`.
 */
import { appendFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ServerProcessOptions {
  /** Shown in error messages, e.g. "tessera-gateway". */
  readonly name: string;
  /** Arguments to `node` (the script first). */
  readonly args: readonly string[];
  /** The `msg` of the JSON line that says the server listens; the line must carry a numeric `port`. */
  readonly startedMsg: string;
  /** Extra environment variables (added to this process's); default none. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Wraps the command before it starts (e.g. pinnedCommand from lib/per-core); default none. */
  readonly wrap?: (command: string, args: string[]) => [string, string[]];
  /** Default 60000 ms. */
  readonly startTimeoutMs?: number;
  /** SIGKILL this long after SIGTERM; default 15000 ms. */
  readonly killAfterMs?: number;
}

export interface RunningServer {
  readonly name: string;
  readonly pid: number;
  readonly port: number;
  /** The last 50 log lines (stdout and stderr), for error reports. */
  recentLog(): string[];
  /** Whether the process has exited (a crash shows here before requests start failing). */
  exited(): boolean;
  stop(): Promise<void>;
}

/** The fields of a JSON log line whose `msg` is `msg`, or undefined for any other line (including non-JSON ones). */
export function logLineFields(line: string, msg: string): Record<string, unknown> | undefined {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof entry !== 'object' || entry === null) return undefined;
  const fields = entry as Record<string, unknown>;
  return fields.msg === msg ? fields : undefined;
}

/** The port of a "started" JSON line with msg `startedMsg`, or undefined for any other line. */
export function parsePortLine(line: string, startedMsg: string): number | undefined {
  const port = logLineFields(line, startedMsg)?.port;
  return typeof port === 'number' ? port : undefined;
}

export function launchServer(options: ServerProcessOptions): Promise<RunningServer> {
  const [command, args] = options.wrap?.(process.execPath, [...options.args]) ?? [process.execPath, [...options.args]];
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  });
  const log: string[] = [];
  let hasExited = false;
  const exitedPromise = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      hasExited = true;
      resolve(code);
    }),
  );
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;

  return new Promise<RunningServer>((resolve, reject) => {
    let started = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${options.name} did not start within ${startTimeoutMs} ms:\n${log.join('\n')}`));
    }, startTimeoutMs);

    const logFile = process.env.BENCH_GATEWAY_LOG || undefined;
    const onLine = (line: string): void => {
      // BENCH_GATEWAY_LOG=FILE: the gateway's output lines appended there too (e.g. its --trace-gc lines); the log above keeps 50.
      if (logFile !== undefined && options.name === 'tessera-gateway') appendFileSync(logFile, `${line}\n`);
      log.push(line);
      if (log.length > 50) log.shift();
      const port = started ? undefined : parsePortLine(line, options.startedMsg);
      if (port === undefined) return;
      started = true;
      clearTimeout(timer);
      resolve({
        name: options.name,
        pid: child.pid as number,
        port,
        recentLog: () => [...log],
        exited: () => hasExited,
        async stop() {
          if (hasExited) return;
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 15_000);
          await exitedPromise;
          clearTimeout(killer);
        },
      });
    };
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    void exitedPromise.then((code) => {
      if (started) return;
      clearTimeout(timer);
      reject(new Error(`${options.name} exited (code ${code}) before it started:\n${log.join('\n')}`));
    });
  });
}
