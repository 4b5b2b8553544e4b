/**
 * Test support: a REAL node process (`node bin/tessera-node.js`) serving only `silero_vad` (written by
 * `bin/tessera-models.js --only silero_vad`; the gateway may not import gpu-node, so the node and its
 * models are driven through their command lines), on loopback port 0, publishing to Redis.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface SileroNode {
  readonly id: string;
  readonly httpUrl: string;
  /** `inference_count` of silero_vad, from the node's own statistics. */
  inferenceCount(): Promise<number>;
  /** SIGKILL: the node dies without a goodbye, as a crashed machine would. Resolves once it exited. */
  kill(): Promise<void>;
  /** SIGTERM (SIGKILL after 5 s). The repository is the caller's to remove. */
  stop(): Promise<void>;
}

export async function writeSileroRepository(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-gw-seq-'));
  await promisify(execFile)(process.execPath, [join(ROOT, 'bin/tessera-models.js'), '--out', dir, '--only', 'silero_vad']);
  return dir;
}

export async function startSileroNode(id: string, repository: string, redisUrl: string): Promise<SileroNode> {
  const args = [
    join(ROOT, 'bin/tessera-node.js'),
    '--model-repository', repository,
    '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0',
    '--http-address', '127.0.0.1', '--grpc-address', '127.0.0.1', '--metrics-address', '127.0.0.1',
    '--exit-timeout-secs', '1',
    '--redis-url', redisUrl, '--node-id', id, '--advertise-host', '127.0.0.1',
  ];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let log = '';
  const httpPort = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      log += chunk.toString('utf8');
      buffered += chunk.toString('utf8');
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        try {
          const entry = JSON.parse(line) as { msg?: string; httpPort?: number };
          if (entry.msg === 'tessera-node started' && typeof entry.httpPort === 'number') {
            child.stderr?.off('data', onData);
            child.stderr?.resume(); // keep draining so the node never blocks on a full pipe
            resolve(entry.httpPort);
          }
        } catch {
          // not a JSON log line
        }
      }
    };
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`tessera-node exited with ${code} before starting:\n${log.slice(-4000)}`)));
  });
  const httpUrl = `http://127.0.0.1:${httpPort}`;
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    id,
    httpUrl,
    async inferenceCount() {
      const res = await fetch(`${httpUrl}/v2/models/silero_vad/stats`);
      const body = (await res.json()) as { model_stats: { inference_count: number | string }[] };
      return body.model_stats.reduce((n, s) => n + Number(s.inference_count), 0);
    },
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
