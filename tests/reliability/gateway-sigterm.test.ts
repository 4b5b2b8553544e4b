/**
 * The gateway process (`bin/tessera-gateway.js`) sent SIGTERM under load, in front of a real node.
 * Proves: requests already in flight finish with 200; once the gateway said it is shutting down a
 * new connection is refused cleanly (ECONNREFUSED, never a hang or a half answer); the process exits 0;
 * and its log never shows the API key.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { sleepyBody } from './support/stack.js';
import { withinMs } from './support/timing.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KEY = 'tsk_sigterm-secret-key';

/** One POST on a fresh connection (no keep-alive pool): status, or the connection error's code. */
function postFresh(port: number, path: string, body: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end(body);
  });
}

describe('gateway SIGTERM under load', () => {
  let node: NodeProcess;
  let dir: string;
  let child: ChildProcess;
  let stderr = '';

  beforeAll(async () => {
    node = await startNodeProcess();
    dir = await mkdtemp(join(tmpdir(), 'tessera-sigterm-'));
    const config = {
      tiers: { standard: { queueTimeoutMs: 20_000 } },
      tenants: [{ id: 't', tier: 'standard', keys: [{ id: 't1', hash: await sha256Hex(KEY) }] }],
      nodes: [{ id: 'n1', grpc: node.grpcAddress }],
      // /metrics is behind the admin key by default (issue 14); this test's loopback is the private scrape network.
      metrics: { requireAdminKey: false },
    };
    await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
    const env = { ...process.env };
    delete env.REDIS_URL;
    delete env.TESSERA_ADMIN_KEY;
    child = spawn(process.execPath, [join(ROOT, 'bin/tessera-gateway.js'), '--config', join(dir, 'gateway.json'), '--port', '0', '--host', '127.0.0.1'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  });

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await node?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('finishes the requests in flight, refuses new connections cleanly, and exits 0', async () => {
    const port = await waitFor(
      () => {
        const line = stderr.split('\n').find((l) => l.includes('"tessera-gateway started"'));
        return line === undefined ? undefined : (JSON.parse(line) as { port: number }).port;
      },
      { what: 'the gateway to start', timeoutMs: 30_000 },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Warm the route (the first call opens the gRPC channel), then put requests in flight.
    expect(await postFresh(port, '/v2/models/sleepy/infer', sleepyBody(1))).toBe(200);
    // Ten requests sent at once, which the node runs one at a time, 600 ms each: when the first has
    // been answered (the gateway counts 2 sleepy 200s with the warm-up), the other nine have long been
    // received and need seconds more: they are in flight when SIGTERM comes.
    let last = '';
    const inFlight = Array.from({ length: 10 }, () => postFresh(port, '/v2/models/sleepy/infer', sleepyBody(600)));
    await waitFor(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        last = text.split('\n').filter((l) => /sleepy|queue_wait_seconds_count|requests_total/.test(l) && !l.startsWith('#') && !l.includes('bucket')).join('\n');
        return Number(/tessera_gateway_requests_total\{route="infer",[^}]*model="sleepy",status="200"\} (\d+)/.exec(text)?.[1] ?? 0) >= 2 || undefined;
      },
      { what: 'the first of the ten answered', timeoutMs: 20_000 },
    ).catch((error: Error) => {
      throw new Error(`${error.message}; metrics: ${last}; gateway log: ${stderr.slice(-1500)}`);
    });
    child.kill('SIGTERM');
    await waitFor(() => stderr.includes('"shutting down"') || undefined, { what: 'the shutdown log line' });
    const refused = await withinMs(postFresh(port, '/v2/models/sleepy/infer', sleepyBody(1)), 5000, 'a new request after SIGTERM');
    expect(refused).toBe('ECONNREFUSED');
    expect(await withinMs(Promise.all(inFlight), 30_000, 'in-flight requests')).toEqual(inFlight.map(() => 200));
    expect(await withinMs(exited, 20_000, 'the gateway to exit')).toBe(0);
    expect(stderr).not.toContain(KEY);
  });
});
