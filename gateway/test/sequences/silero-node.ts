/**
 * Test support: a REAL node process (`node bin/tessera-node.js`) serving only `silero_vad` (written by
 * `bin/tessera-models.js --only silero_vad`; the gateway may not import gpu-node, so the node and its
 * models are driven through their command lines), on loopback port 0, publishing to Redis.
 */
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { spawnNode } from '../support/test-node-process.js';

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
  const node = await spawnNode(repository, ['--redis-url', redisUrl, '--node-id', id, '--advertise-host', '127.0.0.1']);
  const child = node.process;
  const exited = node.exited;
  const httpPort = node.httpPort;
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
