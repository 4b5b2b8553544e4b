/**
 * The gateway process (`bin/tessera-gateway.js --grpc-port 0`) sent SIGTERM with gRPC calls in
 * flight on its front door, in front of a real node. Proves: the `--grpc-port` flag opens the
 * listener (its port is in the start line); calls already running on it finish OK together with
 * HTTP requests; after SIGTERM new gRPC calls are refused (UNAVAILABLE, never a hang); the process exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerLiveRequestSchema, type ModelInferResponse } from '../../shared/src/gen/grpc_service_pb.js';
import { waitFor } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { frontClient, sleepyProto } from '../../gateway/test/grpc-front/front-client.js';
import { sleepyBody } from './support/stack.js';
import { withinMs } from './support/timing.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KEY = 'tsk_grpc-sigterm-secret-key';

describe('gateway SIGTERM with gRPC calls in flight', () => {
  let node: NodeProcess;
  let dir: string;
  let child: ChildProcess;
  let stderr = '';

  beforeAll(async () => {
    node = await startNodeProcess();
    dir = await mkdtemp(join(tmpdir(), 'tessera-grpc-sigterm-'));
    const config = {
      tiers: { standard: { queueTimeoutMs: 20_000 } },
      tenants: [{ id: 't', tier: 'standard', keys: [{ id: 't1', hash: await sha256Hex(KEY) }] }],
      nodes: [{ id: 'n1', grpc: node.grpcAddress }],
    };
    await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
    const env = { ...process.env };
    delete env.REDIS_URL;
    delete env.TESSERA_ADMIN_KEY;
    child = spawn(
      process.execPath,
      [join(ROOT, 'bin/tessera-gateway.js'), '--config', join(dir, 'gateway.json'), '--port', '0', '--grpc-port', '0', '--host', '127.0.0.1'],
      { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  });

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await node?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('finishes gRPC and HTTP calls in flight, refuses new gRPC calls, and exits 0', async () => {
    const started = await waitFor(
      () => {
        const line = stderr.split('\n').find((l) => l.includes('"tessera-gateway started"'));
        return line === undefined ? undefined : (JSON.parse(line) as { port: number; grpcPort?: number });
      },
      { what: 'the gateway to start', timeoutMs: 30_000 },
    );
    expect(started.grpcPort).toEqual(expect.any(Number));
    const client = frontClient(`127.0.0.1:${started.grpcPort}`);
    try {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      // Warm up (the first call opens the gateway's channel to the node).
      expect((await client.unary('modelInfer', sleepyProto(1), { key: KEY })).error).toBeUndefined();
      const grpcCalls = Array.from({ length: 4 }, () => client.unary<ModelInferResponse>('modelInfer', sleepyProto(500), { key: KEY }));
      const httpCall = fetch(`http://127.0.0.1:${started.port}/v2/models/sleepy/infer`, {
        method: 'POST',
        body: sleepyBody(500),
        headers: { authorization: `Bearer ${KEY}` },
      }).then((r) => r.status);
      await new Promise((resolve) => setTimeout(resolve, 200));
      child.kill('SIGTERM');
      await waitFor(() => stderr.includes('"shutting down"') || undefined, { what: 'the shutdown log line' });
      const results = await withinMs(Promise.all(grpcCalls), 30_000, 'in-flight gRPC calls');
      expect(results.map((r) => r.error?.details ?? 'OK')).toEqual(results.map(() => 'OK'));
      expect(await withinMs(httpCall, 30_000, 'the in-flight HTTP request')).toBe(200);
      expect(await withinMs(exited, 20_000, 'the gateway to exit')).toBe(0);
      const after = await withinMs(client.unary('serverLive', create(ServerLiveRequestSchema), { deadlineMs: 3000 }), 5000, 'a gRPC call after exit');
      expect(after.error?.code).toBe(status.UNAVAILABLE);
      expect(stderr).not.toContain(KEY);
    } finally {
      client.close();
    }
  });
});
