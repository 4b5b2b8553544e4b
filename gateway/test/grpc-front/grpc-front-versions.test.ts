/**
 * Version splits through the gRPC front door: a real node serving `sleepy` versions 1 and 2, the
 * gateway (static fleet, no Redis) splitting sleepy 1:1 and sticky by `x-session` metadata.
 */
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelInferResponse } from '../../../shared/src/gen/grpc_service_pb.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { waitFor } from '../../../shared/test/support/index.js';
import { spawnNode, writeTestRepository, type SpawnedNode } from '../support/test-node-process.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { frontClient, sleepyProto, type FrontClient } from './front-client.js';

const KEY = 'tsk_grpc-front-versions';

describe('gRPC front door: version splits (node with sleepy v1 and v2, static fleet)', () => {
  let repository: string;
  let node: SpawnedNode;
  let gateway: RunningGateway;
  let client: FrontClient;

  beforeAll(async () => {
    repository = await writeTestRepository();
    await cp(join(repository, 'sleepy', '1'), join(repository, 'sleepy', '2'), { recursive: true });
    const config = await readFile(join(repository, 'sleepy', 'config.pbtxt'), 'utf8');
    await writeFile(join(repository, 'sleepy', 'config.pbtxt'), `${config}version_policy: { all: {} }\n`);
    node = await spawnNode(repository);
    gateway = await startGateway({
      config: loadGatewayConfig(
        JSON.stringify({
          tiers: { standard: { queueTimeoutMs: 20_000 } },
          tenants: [{ id: 't', tier: 'standard', keys: [{ id: 't1', hash: await sha256Hex(KEY) }] }],
          routing: { models: { sleepy: { splits: [{ version: '1', weight: 1 }, { version: '2', weight: 1 }], stickyHeader: 'x-session' } } },
        }),
      ),
      redisUrl: null,
      nodes: [{ id: 'n1', grpc: `127.0.0.1:${node.grpcPort}`, http: null }],
      port: 0,
      grpcPort: 0,
      host: '127.0.0.1',
      logger: silentLogger,
    });
    await waitFor(() => gateway.directory.candidates('sleepy').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
    client = frontClient(gateway.grpcTarget!);
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await gateway?.close({ graceMs: 1000 });
    if (node !== undefined && node.process.exitCode === null) {
      node.process.kill('SIGTERM');
      await node.exited;
    }
    if (repository !== undefined) await rm(repository, { recursive: true, force: true });
  });

  const versionOf = async (metadata: Record<string, string>, modelVersion = ''): Promise<string> => {
    const result = await client.unary<ModelInferResponse>('modelInfer', { ...sleepyProto(1), modelVersion }, { key: KEY, metadata });
    expect(result.error?.details).toBeUndefined();
    return result.response!.modelVersion;
  };

  it('splits calls without a version over both, keeps a session on one, and serves a named version exactly', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 30 && seen.size < 2; i++) seen.add(await versionOf({}));
    expect([...seen].sort()).toEqual(['1', '2']);
    for (const session of ['alice', 'bob', 'carol']) {
      const versions = new Set<string>();
      for (let i = 0; i < 6; i++) versions.add(await versionOf({ 'x-session': session }));
      expect(versions.size, session).toBe(1);
    }
    expect(await versionOf({}, '2')).toBe('2');
    expect(await versionOf({ 'x-session': 'alice' }, '1')).toBe('1');
  });
});
