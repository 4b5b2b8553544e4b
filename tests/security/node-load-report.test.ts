/**
 * Issue 14, node side: a model name with `/` once made every load report of the node fail the
 * gateway's validation, so the gateway dropped the whole node. Against a real `tessera-node` process
 * publishing to a real redis-server: every way to get such a name in (HTTP load, percent-encoded;
 * gRPC load; a config naming one; a repository folder; --load-model) is refused or skipped, and the
 * reports that follow still parse with the gateway's own parser and list only the valid model.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { Client, credentials, status } from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetKeys, parseLoadReport, type LoadReport } from '../../shared/src/fleet/index.js';
import { GRPCInferenceService, RepositoryModelLoadRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../shared/src/grpc/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { grpcFailure, loadBody, rawCall, scriptModel, securityWorkspace, startNodeProcess, type NodeProcess, type Workspace } from './support/node-process.js';

const NODE_ID = `sec-report-${randomUUID().slice(0, 8)}`;

let workspace: Workspace;
let base: string;
let redisServer: RedisServer;
let redis: Redis;
let node: NodeProcess;

beforeAll(async () => {
  workspace = await securityWorkspace('tessera-sec-report-', { badlyNamedFolder: true });
  base = workspace.base;
  redisServer = await startRedisServer();
  redis = new Redis(redisServer.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  node = await startNodeProcess(workspace.repo, ['--model-control-mode', 'explicit', '--load-model', '*', '--redis-url', redisServer.url, '--node-id', NODE_ID]);
}, 90_000);

afterAll(async () => {
  await node?.stop();
  redis?.disconnect();
  await redisServer?.stop();
  await workspace?.remove();
});

async function currentReport(): Promise<LoadReport | undefined> {
  const json = await redis.get(fleetKeys().nodeKey(NODE_ID));
  // parseLoadReport is what the gateway runs on every report: it throws on any invalid model name.
  return json === null ? undefined : parseLoadReport(json);
}

describe('load reports cannot be poisoned by a model name', () => {
  it('publishes a valid report listing the good model only (the badly named folder was skipped)', async () => {
    const report = await waitFor(currentReport, { timeoutMs: 20_000, what: 'first load report' });
    expect(report.models.map((m) => m.name)).toEqual(['good']);
  });

  it('refuses every attempt to load a name with "/" and keeps publishing valid reports afterwards', async () => {
    const model = scriptModel('x', join(base, 'never'));
    const http = await rawCall(node.http, 'POST', '/v2/repository/models/a%2Fb/load', { body: loadBody({ ...model.config, name: 'a/b' }, model.files) });
    expect(http.status).toBe(400);
    // A valid path name whose config names another model: refused too (names must match, and be valid).
    const config = await rawCall(node.http, 'POST', '/v2/repository/models/c/load', { body: loadBody({ ...model.config, name: 'a/b' }, model.files) });
    expect(config.status).toBe(400);

    const client = new Client(node.grpcTarget, credentials.createInsecure());
    try {
      const svc = clientServiceDefinition(GRPCInferenceService);
      const error = await grpcFailure(callUnary(client, svc.repositoryModelLoad, create(RepositoryModelLoadRequestSchema, { modelName: 'a/b' })));
      expect(error.code).toBe(status.INVALID_ARGUMENT);
    } finally {
      client.close();
    }

    const seen = (await currentReport())?.seq ?? 0;
    const later = await waitFor(async () => {
      const report = await currentReport();
      return report !== undefined && report.seq > seen + 1 ? report : undefined;
    }, { timeoutMs: 20_000, what: 'two more load reports' });
    expect(later.models.map((m) => m.name)).toEqual(['good']);
    expect(node.logs.some((l) => l.msg === 'could not build a load report; skipping it')).toBe(false);
  });
});
