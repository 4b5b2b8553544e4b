/**
 * Issue 14, node side: a node in explicit model control mode with model-repository and logging
 * restricted on both endpoints (the README's recommended command line), as a real `tessera-node`
 * process. Code upload (a TypeScript-backend model through `file:` overrides), unload and
 * `POST /v2/logging` are refused without the header, with tritonserver's status and wording, and
 * allowed with it; inference stays open. The README says the same in plain words.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Client, Metadata, credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GRPCInferenceService,
  RepositoryModelLoadRequestSchema,
  RepositoryModelUnloadRequestSchema,
  type ModelRepositoryParameterSchema,
} from '../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../shared/src/grpc/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import { grpcFailure, loadBody, rawCall, scriptModel, securityWorkspace, startNodeProcess, type NodeProcess, type Workspace } from './support/node-process.js';

const SECRET = randomUUID();
const HTTP_DENIED = { error: "This API is restricted, expecting header 'admin-key'" };
const GRPC_DENIED = "This protocol is restricted, expecting header 'triton-grpc-protocol-admin-key'";
const svc = clientServiceDefinition(GRPCInferenceService);

let workspace: Workspace;
let base: string;
let node: NodeProcess;
let client: Client;

beforeAll(async () => {
  workspace = await securityWorkspace('tessera-sec-restricted-');
  base = workspace.base;
  node = await startNodeProcess(workspace.repo, [
    '--model-control-mode', 'explicit',
    '--load-model', 'good',
    `--http-restricted-api=model-repository,logging:admin-key=${SECRET}`,
    `--grpc-restricted-protocol=model-repository,logging:admin-key=${SECRET}`,
  ]);
  client = new Client(node.grpcTarget, credentials.createInsecure());
}, 90_000);

afterAll(async () => {
  client?.close();
  await node?.stop();
  await workspace?.remove();
});

const admin = { 'admin-key': SECRET };
const infer = () =>
  rawCall(node.http, 'POST', '/v2/models/good/infer', {
    body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 3] }] }),
  });
const withAdmin = (): Metadata => {
  const metadata = new Metadata();
  metadata.set('triton-grpc-protocol-admin-key', SECRET);
  return metadata;
};
const grpcLoad = (modelName: string, files: Record<string, string>, config: Record<string, unknown>, metadata = new Metadata()) => {
  const parameters: Record<string, MessageInitShape<typeof ModelRepositoryParameterSchema>> = {
    config: { parameterChoice: { case: 'stringParam', value: JSON.stringify(config) } },
  };
  for (const [path, content] of Object.entries(files)) parameters[`file:${path}`] = { parameterChoice: { case: 'bytesParam', value: Buffer.from(content) } };
  return callUnary(client, svc.repositoryModelLoad, create(RepositoryModelLoadRequestSchema, { modelName, parameters }), { metadata });
};

describe('restricted model-repository and logging', () => {
  it('does not warn about an open repository API', () => {
    expect(node.logs.some((l) => typeof l.msg === 'string' && l.msg.includes('model-repository API is open'))).toBe(false);
  });

  it('refuses a TypeScript code upload without the header: 403 / UNAVAILABLE, and the code never runs', async () => {
    const marker = join(base, 'upload-ran');
    const upload = scriptModel('upload', marker);
    const attempts: Record<string, string>[] = [{}, { 'admin-key': 'wrong' }, { 'triton-grpc-protocol-admin-key': SECRET }];
    for (const headers of attempts) {
      const res = await rawCall(node.http, 'POST', '/v2/repository/models/upload/load', { body: loadBody(upload.config, upload.files), headers });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.text)).toEqual(HTTP_DENIED);
    }
    const error = await grpcFailure(grpcLoad('upload', upload.files, upload.config));
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(error.details).toBe(GRPC_DENIED);
    expect(existsSync(marker)).toBe(false);
    expect(await node.tmpEntries('tessera-override-')).toEqual([]);
    expect((await rawCall(node.http, 'GET', '/v2/models/upload/ready')).status).toBe(400);
  });

  it('refuses unload without the header (the model keeps serving), allows it with the header', async () => {
    const res = await rawCall(node.http, 'POST', '/v2/repository/models/good/unload');
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text)).toEqual(HTTP_DENIED);
    const unload = create(RepositoryModelUnloadRequestSchema, { modelName: 'good' });
    const error = await grpcFailure(callUnary(client, svc.repositoryModelUnload, unload));
    expect([error.code, error.details]).toEqual([status.UNAVAILABLE, GRPC_DENIED]);
    // Inference is not restricted: served without any header.
    expect((await infer()).status).toBe(200);

    expect((await rawCall(node.http, 'POST', '/v2/repository/models/good/unload', { headers: admin })).status).toBe(200);
    await waitFor(async () => (await rawCall(node.http, 'GET', '/v2/models/good/ready')).status === 404, { timeoutMs: 20_000, what: 'good unloaded' });
    expect((await rawCall(node.http, 'POST', '/v2/repository/models/good/load', { headers: admin })).status).toBe(200);
    await callUnary(client, svc.repositoryModelUnload, unload, { metadata: withAdmin() });
    await waitFor(async () => (await rawCall(node.http, 'GET', '/v2/models/good/ready')).status === 404, { timeoutMs: 20_000, what: 'good unloaded over gRPC' });
  });

  it('refuses POST and GET /v2/logging without the header; with it the settings change', async () => {
    for (const method of ['GET', 'POST']) {
      const res = await rawCall(node.http, method, '/v2/logging', { body: method === 'POST' ? '{"log_verbose_level":1}' : undefined });
      expect(res.status, method).toBe(403);
      expect(JSON.parse(res.text)).toEqual(HTTP_DENIED);
    }
    const before = JSON.parse((await rawCall(node.http, 'GET', '/v2/logging', { headers: admin })).text) as { log_verbose_level: number };
    expect(before.log_verbose_level).toBe(0);
    const changed = await rawCall(node.http, 'POST', '/v2/logging', { body: '{"log_verbose_level":1}', headers: admin });
    expect(changed.status).toBe(200);
    expect((JSON.parse(changed.text) as { log_verbose_level: number }).log_verbose_level).toBe(1);
  });

  it('lets the key holder upload (the code then runs: the restriction is what stands in the way)', async () => {
    const marker = join(base, 'admin-upload-ran');
    const upload = scriptModel('admin_upload', marker);
    const res = await rawCall(node.http, 'POST', '/v2/repository/models/admin_upload/load', { body: loadBody(upload.config, upload.files), headers: admin });
    expect(res.status, res.text).toBe(200);
    expect(existsSync(marker)).toBe(true);
    const grpcMarker = join(base, 'admin-grpc-upload-ran');
    const grpcUpload = scriptModel('admin_grpc_upload', grpcMarker);
    await grpcLoad('admin_grpc_upload', grpcUpload.files, grpcUpload.config, withAdmin());
    expect(existsSync(grpcMarker)).toBe(true);
  });
});

describe('README', () => {
  it('says plainly that explicit mode plus the TypeScript backend is remote code upload unless restricted, and lists both flags', async () => {
    const readme = await readFile(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    expect(readme).toMatch(/Explicit model control plus the TypeScript backend is remote code upload/);
    expect(readme).toMatch(/unless model-repository is restricted on \*\*both\*\*\s+endpoints/);
    expect(readme).toMatch(/\| `--http-restricted-api CATEGORIES:HEADER=VALUE` \|/);
    expect(readme).toMatch(/\| `--grpc-restricted-protocol CATEGORIES:KEY=VALUE` \|/);
  });
});
