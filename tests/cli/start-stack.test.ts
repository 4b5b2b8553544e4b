/**
 * `npm start` (bin/tessera-start.js) as the README has people run it: it announces readiness only once
 * the node is ready, and prints a ready-to-paste curl with the demo tenant's key that works.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeExampleRepository } from '../../gpu-node/src/example-models/index.js';
import { waitFor } from '../../shared/test/support/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('npm start', () => {
  let dir: string;
  let child: ChildProcess;
  let stdout = '';
  const ports: Record<string, number> = {};

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-start-'));
    await writeExampleRepository(join(dir, 'models'), { only: ['simple'] });
    for (const name of ['http', 'grpc', 'metrics', 'gateway']) ports[name] = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TESSERA_MODELS: join(dir, 'models'),
      TESSERA_HTTP_PORT: String(ports.http),
      TESSERA_GRPC_PORT: String(ports.grpc),
      TESSERA_METRICS_PORT: String(ports.metrics),
      TESSERA_GATEWAY_PORT: String(ports.gateway),
    };
    delete env.REDIS_URL;
    child = spawn(process.execPath, [join(ROOT, 'bin/tessera-start.js')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  });

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  });

  it('says "ready" only when the node is ready, then prints a curl with the demo key that works', async () => {
    await waitFor(() => stdout.includes('tessera: ready.'), { timeoutMs: 60_000, what: 'the ready line' });
    // Announced only once the node is ready: its readiness answers 200 at once.
    expect((await fetch(`http://127.0.0.1:${ports.http}/v2/health/ready`)).status).toBe(200);
    const key = /export DEMO_KEY=(\S+)/.exec(stdout)?.[1];
    expect(key).toMatch(/^tsk_/);
    const curl = /curl -s -X POST (\S+) -H "Authorization: Bearer \$DEMO_KEY" -d '(.+)'/.exec(stdout);
    expect(curl?.[1]).toBe(`localhost:${ports.gateway}/v2/models/simple/infer`);
    const answer = await fetch(`http://${curl![1]}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: curl![2] });
    expect(answer.status, await answer.clone().text()).toBe(200);
    const body = (await answer.json()) as { outputs: { name: string; data: number[] }[] };
    expect(body.outputs.find((o) => o.name === 'OUTPUT0')?.data).toEqual(Array.from({ length: 16 }, (_, i) => i + 2));
  });
});
