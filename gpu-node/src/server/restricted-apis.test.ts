/**
 * Triton's restricted APIs on both endpoints, against the fake core: the flag grammar, the category of
 * every route and RPC, and tritonserver's exact refusals (HTTP 403 "This API is restricted, expecting
 * header '<header>'"; gRPC UNAVAILABLE "This protocol is restricted, expecting header
 * 'triton-grpc-protocol-<key>'").
 */
import { create } from '@bufbuild/protobuf';
import { Client, Metadata, credentials, status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GRPCInferenceService,
  ModelInferRequestSchema,
  ModelStatisticsRequestSchema,
  RepositoryModelUnloadRequestSchema,
  ServerLiveRequestSchema,
} from '../../../shared/src/gen/grpc_service_pb.js';
import { Health, HealthCheckRequestSchema } from '../../../shared/src/gen/health_pb.js';
import { callUnary, clientServiceDefinition } from '../../../shared/src/grpc/index.js';
import { FakeNodeCore, IDENTITY_MODEL } from '../../test/support/fake-node-core.js';
import { createGrpcServer, type GrpcServer } from './grpc/index.js';
import { rawRequest, startTestServer, type TestServer } from '../../test/support/test-server.js';
import { parseRestrictions, RESTRICTED_CATEGORIES } from './restricted-apis.js';

describe('flag grammar', () => {
  it('parses categories:key=value, repeatable, one restriction per category', () => {
    const { restrictions, problems } = parseRestrictions(
      '--http-restricted-api',
      ['model-repository,logging:Admin-Key=s3cr=t', 'inference:infer-key=v'],
      'http',
    );
    expect(problems).toEqual([]);
    expect(Object.fromEntries(restrictions)).toEqual({
      'model-repository': { header: 'Admin-Key', value: 's3cr=t' },
      logging: { header: 'Admin-Key', value: 's3cr=t' },
      inference: { header: 'infer-key', value: 'v' },
    });
    const grpc = parseRestrictions('--grpc-restricted-protocol', ['health:Admin-Key=x'], 'grpc');
    expect(grpc.restrictions.get('health')).toEqual({ header: 'triton-grpc-protocol-admin-key', value: 'x' });
  });

  it('refuses unknown categories, a category twice, a missing key or value, and a bad header name', () => {
    const bad = (values: string[]) => parseRestrictions('--http-restricted-api', values, 'http').problems;
    expect(bad(['models:k=v'])[0]).toMatch(/unknown category 'models'/);
    expect(bad(['logging:k=v', 'logging,trace:j=w'])[0]).toMatch(/category 'logging' is restricted more than once/);
    expect(bad(['logging'])[0]).toMatch(/must be <category>/);
    expect(bad(['logging:k'])[0]).toMatch(/must be <category>/);
    expect(bad(['logging:k='])[0]).toMatch(/must not be empty/);
    expect(bad(['logging:bad key=v'])[0]).toMatch(/not a valid header name/);
  });
});

describe('HTTP: --http-restricted-api', () => {
  let t: TestServer;
  // Every category restricted, each with its own header, so a route's category shows in its refusal.
  const restrictions = parseRestrictions(
    '--http-restricted-api',
    RESTRICTED_CATEGORIES.map((c) => `${c}:${c}-key=${c}-value`),
    'http',
  ).restrictions;
  beforeAll(async () => {
    t = await startTestServer({ restrictedApis: restrictions });
  });
  afterAll(() => t.close());

  const routes: [string, string, string][] = [
    ['GET', '/v2/health/live', 'health'],
    ['GET', '/v2/health/ready', 'health'],
    ['GET', `/v2/models/${IDENTITY_MODEL}/ready`, 'health'],
    ['GET', '/v2', 'metadata'],
    ['GET', `/v2/models/${IDENTITY_MODEL}`, 'metadata'],
    ['GET', `/v2/models/${IDENTITY_MODEL}/versions/1`, 'metadata'],
    ['POST', `/v2/models/${IDENTITY_MODEL}/infer`, 'inference'],
    ['POST', `/v2/models/${IDENTITY_MODEL}/generate`, 'inference'],
    ['GET', `/v2/models/${IDENTITY_MODEL}/config`, 'model-config'],
    ['GET', '/v2/models/stats', 'statistics'],
    ['GET', `/v2/models/${IDENTITY_MODEL}/stats`, 'statistics'],
    ['POST', '/v2/repository/index', 'model-repository'],
    ['POST', '/v2/repository/models/m/load', 'model-repository'],
    ['POST', '/v2/repository/models/m/unload', 'model-repository'],
    ['POST', '/v2/repository/r/models/m/load', 'model-repository'],
    ['GET', '/v2/trace/setting', 'trace'],
    ['POST', `/v2/models/${IDENTITY_MODEL}/trace/setting`, 'trace'],
    ['GET', '/v2/logging', 'logging'],
    ['POST', '/v2/logging', 'logging'],
    ['GET', '/v2/systemsharedmemory/status', 'shared-memory'],
    ['POST', '/v2/cudasharedmemory/region/r/register', 'shared-memory'],
  ];

  it("refuses each route without its category's header: 403 and tritonserver's message", async () => {
    for (const [method, path, category] of routes) {
      const res = await rawRequest(`${t.url}${path}`, { method, body: new Uint8Array(0) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(JSON.parse(res.body.toString())).toEqual({ error: `This API is restricted, expecting header '${category}-key'` });
      // The wrong value, or another category's header, is refused the same way.
      const other = category === 'metadata' ? 'logging' : 'metadata';
      const wrong = await rawRequest(`${t.url}${path}`, { method, headers: { [`${category}-key`]: 'nope', [`${other}-key`]: `${other}-value` } });
      expect(wrong.status, `${method} ${path}`).toBe(403);
    }
    expect(t.core.calls).toEqual([]);
  });

  it('serves each route with its header and value (header names are case-insensitive)', async () => {
    for (const [method, path, category] of routes) {
      const res = await rawRequest(`${t.url}${path}`, { method, headers: { [`${category.toUpperCase()}-KEY`]: `${category}-value` } });
      expect(res.status, `${method} ${path}`).not.toBe(403);
    }
  });

  it('leaves unknown paths and wrong methods to their usual 404 and 405', async () => {
    expect((await rawRequest(`${t.url}/v2/nothing`, { method: 'GET' })).status).toBe(404);
    expect((await rawRequest(`${t.url}/v2/logging`, { method: 'PUT' })).status).toBe(405);
  });
});

// On grpc-js's own port and on the raw HTTP/2 front, which serves unary calls in place and must refuse the same ones.
for (const rawH2Front of [false, true]) {
  describe(`gRPC: --grpc-restricted-protocol${rawH2Front ? ' (raw HTTP/2 front)' : ''}`, () => {
    const svc = clientServiceDefinition(GRPCInferenceService);
    const health = clientServiceDefinition(Health);
    const core = new FakeNodeCore();
    let server: GrpcServer;
    let client: Client;
    beforeAll(async () => {
      const { restrictions } = parseRestrictions(
        '--grpc-restricted-protocol',
        ['model-repository,health:admin-key=admin-value', 'inference:infer-key=infer-value'],
        'grpc',
      );
      server = createGrpcServer(core, { restrictedProtocols: restrictions, rawH2Front });
      const { port } = await server.listen(0, '127.0.0.1');
      client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    });
    afterAll(async () => {
      client.close();
      await server.close(1000);
    });

    const metadata = (key?: string, value?: string): Metadata => {
      const m = new Metadata();
      if (key !== undefined && value !== undefined) m.set(key, value);
      return m;
    };
    const refused = async (promise: Promise<unknown>, key: string): Promise<void> => {
      const error = (await promise.then(() => undefined, (e: unknown) => e)) as ServiceError | undefined;
      expect(error?.code).toBe(status.UNAVAILABLE);
      expect(error?.details).toBe(`This protocol is restricted, expecting header 'triton-grpc-protocol-${key}'`);
    };

    it('refuses restricted RPCs without the metadata (fast path included) and serves them with it', async () => {
      const unload = create(RepositoryModelUnloadRequestSchema, { modelName: 'm' });
      await refused(callUnary(client, svc.repositoryModelUnload, unload), 'admin-key');
      await refused(callUnary(client, svc.repositoryModelUnload, unload, { metadata: metadata('triton-grpc-protocol-infer-key', 'infer-value') }), 'admin-key');
      await callUnary(client, svc.repositoryModelUnload, unload, { metadata: metadata('triton-grpc-protocol-admin-key', 'admin-value') });
      expect(core.callsOf('unloadModel')).toHaveLength(1);

      await refused(callUnary(client, svc.serverLive, create(ServerLiveRequestSchema)), 'admin-key');
      await refused(callUnary(client, health.check, create(HealthCheckRequestSchema)), 'admin-key');
      const admin = { metadata: metadata('triton-grpc-protocol-admin-key', 'admin-value') };
      expect((await callUnary(client, svc.serverLive, create(ServerLiveRequestSchema), admin)).response.live).toBe(true);
      expect((await callUnary(client, health.check, create(HealthCheckRequestSchema), admin)).response.status).toBe(1);

      const infer = create(ModelInferRequestSchema, {
        modelName: IDENTITY_MODEL,
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 4n] }],
        rawInputContents: [new Uint8Array(16)],
      });
      await refused(callUnary(client, svc.modelInfer, infer), 'infer-key');
      const served = await callUnary(client, svc.modelInfer, infer, { metadata: metadata('triton-grpc-protocol-infer-key', 'infer-value') });
      expect(served.response.modelName).toBe(IDENTITY_MODEL);

      // A stream of a restricted category ends with the same status before reading anything.
      const stream = client.makeBidiStreamRequest(svc.modelStreamInfer.path, svc.modelStreamInfer.requestSerialize, svc.modelStreamInfer.responseDeserialize, new Metadata());
      const streamError = await new Promise<ServiceError>((resolve) => {
        stream.on('error', resolve);
        stream.on('data', () => undefined);
      });
      expect(streamError.code).toBe(status.UNAVAILABLE);
      expect(streamError.details).toMatch(/triton-grpc-protocol-infer-key/);

      // Categories not restricted are served without any metadata.
      await callUnary(client, svc.modelStatistics, create(ModelStatisticsRequestSchema));
    });
  });
}
