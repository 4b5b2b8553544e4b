/**
 * Issue 14, node side: the attacks on the repository API of a node started as the README starts it
 * (explicit model control, no restriction), against a real `tessera-node` process.
 * - model names with `/` or `..`, percent-encoded or raw, over HTTP and gRPC: refused (400 /
 *   INVALID_ARGUMENT naming the problem); nothing is written outside, nothing outside is loaded;
 * - `file:` overrides whose path leaves the model folder: refused; the temporary folder of any
 *   failed load is gone afterwards;
 * - Triton's standard upload (`file:1/model.js`, base64 over HTTP, bytes over gRPC) works, and is
 *   exactly why the README says to restrict model-repository (node-restricted-api.test.ts);
 * - a repository folder linking outside the repository is not loaded; a folder with an invalid name
 *   is skipped with a log line.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Client, credentials, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GRPCInferenceService,
  ModelMetadataRequestSchema,
  RepositoryModelLoadRequestSchema,
  type ModelRepositoryParameterSchema,
} from '../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../shared/src/grpc/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import {
  grpcFailure,
  loadBody,
  rawCall,
  scriptModel,
  securityWorkspace,
  startNodeProcess,
  writeScriptModelFolder,
  type NodeProcess,
  type Workspace,
} from './support/node-process.js';

const OVERRIDE_PREFIX = 'tessera-override-';
const svc = clientServiceDefinition(GRPCInferenceService);
const id = randomUUID().slice(0, 8);

let workspace: Workspace;
let base: string;
let repo: string;
let node: NodeProcess;
let client: Client;

/** Every place a traversal of `name` could have written to, none of which may exist. */
function escapes(name: string): string[] {
  return [join(node.tmp, name), join(dirname(node.tmp), name), join(base, name), join(repo, name), join(dirname(base), name)];
}

function expectNothingWritten(name: string): void {
  for (const path of escapes(name)) expect(existsSync(path), path).toBe(false);
}

const errorOf = (text: string): string => (JSON.parse(text) as { error: string }).error;

beforeAll(async () => {
  workspace = await securityWorkspace('tessera-sec-repo-', { badlyNamedFolder: true });
  ({ base, repo } = workspace);
  // A model outside the repository, reachable by '../outside' and by a link inside the repository.
  await writeScriptModelFolder(base, 'outside', 'outside', join(base, 'outside-ran'));
  await writeScriptModelFolder(base, 'linked-out', 'escaped', join(base, 'linked-ran'));
  await symlink(join(base, 'linked-out'), join(repo, 'escaped'));
  node = await startNodeProcess(repo, ['--model-control-mode', 'explicit', '--load-model', '*']);
  client = new Client(node.grpcTarget, credentials.createInsecure());
}, 90_000);

afterAll(async () => {
  client?.close();
  await node?.stop();
  await workspace?.remove();
});

describe('startup scan', () => {
  it('loads the good model, refuses the link leaving the repository, skips the badly named folder', async () => {
    const index = JSON.parse((await rawCall(node.http, 'POST', '/v2/repository/index')).text) as { name: string; state?: string; reason?: string }[];
    expect(index.map((e) => e.name)).toEqual(['escaped', 'good']);
    expect(index.find((e) => e.name === 'good')?.state).toBe('READY');
    expect(index.find((e) => e.name === 'escaped')).toMatchObject({ state: 'UNAVAILABLE', reason: expect.stringMatching(/resolves outside the model repository/) });
    expect(existsSync(join(base, 'linked-ran'))).toBe(false);
    expect(existsSync(join(base, 'bad-ran'))).toBe(false);
    expect(node.logs.some((l) => typeof l.msg === 'string' && l.msg.includes('skipping model repository folder "bad\\\\name"'))).toBe(true);
  });

  it('warns at start that the open model-repository API means remote code upload', () => {
    const warnings = node.logs.filter((l) => typeof l.msg === 'string' && l.msg.includes('model-repository API is open'));
    expect(warnings.map((l) => l.msg)).toEqual([expect.stringMatching(/--http-restricted-api/), expect.stringMatching(/--grpc-restricted-protocol/)]);
  });
});

describe('HTTP', () => {
  const model = scriptModel('victim', join(base ?? '', 'never'));

  it('refuses a percent-encoded traversal name with 400 and writes nothing anywhere', async () => {
    const name = `pwned-http-${id}`;
    for (const encoded of [`..%2F..%2F${name}`, `..%2F..%2F..%2F${name}%2Fx`, `..%2f${name}`, `%2e%2e%2F${name}`, `..%5C${name}`]) {
      const res = await rawCall(node.http, 'POST', `/v2/repository/models/${encoded}/load`, { body: loadBody(model.config, model.files) });
      expect(res.status, encoded).toBe(400);
      expect(errorOf(res.text)).toMatch(/^invalid model name ".*": a model name must not contain '\/' or '\\'/);
    }
    expectNothingWritten(name);
    expect(await node.tmpEntries(OVERRIDE_PREFIX)).toEqual([]);
  });

  it('refuses `..` as a name, and never loads the model folder outside the repository', async () => {
    for (const encoded of ['..%2Foutside', '%2e%2e%2foutside', '%2E%2E%2F..%2Fetc']) {
      const res = await rawCall(node.http, 'POST', `/v2/repository/models/${encoded}/load`);
      expect(res.status, encoded).toBe(400);
      expect(errorOf(res.text)).toMatch(/^invalid model name/);
    }
    // A whole segment of encoded dots is a dot segment to URL parsing: the path changes and matches no route.
    for (const encoded of ['%2E%2E', '.%2e', '%2e']) {
      const res = await rawCall(node.http, 'POST', `/v2/repository/models/${encoded}/load`);
      expect([400, 404], encoded).toContain(res.status);
    }
    expect(existsSync(join(base, 'outside-ran'))).toBe(false);
  });

  it('a raw (unencoded) traversal never reaches a load: no 2xx, nothing written', async () => {
    const name = `pwned-raw-${id}`;
    for (const path of [`/v2/repository/models/../../${name}/load`, `/v2/repository/models/..\\..\\${name}/load`, `/v2/repository/models/../outside/load`]) {
      const res = await rawCall(node.http, 'POST', path, { body: loadBody(model.config, model.files) });
      expect([400, 404], `${path}: ${res.text}`).toContain(res.status);
    }
    expectNothingWritten(name);
    expect(existsSync(join(base, 'outside-ran'))).toBe(false);
  });

  it('refuses file: overrides that leave the model folder, and leaves no temporary folder', async () => {
    const name = `pwned-file-${id}`;
    const cases: [string, RegExp][] = [
      [`file:../../${name}`, /'\.\.' segment/],
      [`file:1/../../../${name}`, /'\.\.' segment/],
      [`file:${join(base, name)}`, /must be relative/],
      [`file:1\\..\\..\\${name}`, /contains '\\'/],
      [`file:1/${name}\u0000.js`, /NUL/],
    ];
    for (const [key, message] of cases) {
      const res = await rawCall(node.http, 'POST', '/v2/repository/models/victim/load', { body: loadBody(model.config, { ...model.files, [key]: 'x' }) });
      expect(res.status, key).toBe(400);
      expect(errorOf(res.text)).toMatch(message);
    }
    expectNothingWritten(name);
    expect(await node.tmpEntries(OVERRIDE_PREFIX)).toEqual([]);
  });

  it('removes the temporary model folder of a load that fails after its files were written', async () => {
    const broken = { ...model.config, name: 'broken', backend: 'no_such_backend' };
    const res = await rawCall(node.http, 'POST', '/v2/repository/models/broken/load', { body: loadBody(broken, model.files) });
    expect(res.status).toBe(400);
    expect(errorOf(res.text)).toMatch(/failed to load 'broken'/);
    expect(await node.tmpEntries(OVERRIDE_PREFIX)).toEqual([]);
  });

  it("Triton's standard upload (file:1/model.js in base64) loads and serves; its folder goes with the unload", async () => {
    const marker = join(base, 'uploaded-ran');
    const uploaded = scriptModel('uploaded', marker);
    const res = await rawCall(node.http, 'POST', '/v2/repository/models/uploaded/load', { body: loadBody(uploaded.config, uploaded.files) });
    expect(res.status, res.text).toBe(200);
    // The uploaded code ran as the node's user: this is remote code upload, hence the README's warning.
    expect(existsSync(marker)).toBe(true);
    const infer = await rawCall(node.http, 'POST', '/v2/models/uploaded/infer', {
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 2], data: [1, 3] }] }),
    });
    expect((JSON.parse(infer.text) as { outputs: { data: number[] }[] }).outputs[0]?.data).toEqual([2, 6]);
    expect(await node.tmpEntries(OVERRIDE_PREFIX)).toHaveLength(1);
    expect((await rawCall(node.http, 'POST', '/v2/repository/models/uploaded/unload')).status).toBe(200);
    await waitFor(async () => (await node.tmpEntries(OVERRIDE_PREFIX)).length === 0, { timeoutMs: 20_000, what: 'override folder removed' });
  });

  it('refuses invalid names on the other model routes too (400 naming the problem, not 404)', async () => {
    for (const path of ['/v2/models/a%2Fb', '/v2/models/a%2Fb/ready', '/v2/models/a%2Fb/config', '/v2/models/a%5Cb/stats', '/v2/repository/models/a%2Fb/unload']) {
      const method = path.endsWith('unload') ? 'POST' : 'GET';
      const res = await rawCall(node.http, method, path);
      expect(res.status, path).toBe(400);
      expect(errorOf(res.text)).toMatch(/^invalid model name/);
    }
    const infer = await rawCall(node.http, 'POST', '/v2/models/a%00b/infer', { body: '{"inputs":[]}' });
    expect(infer.status).toBe(400);
    expect(errorOf(infer.text)).toMatch(/NUL or control characters/);
  });
});

describe('gRPC', () => {
  const stringParam = (value: string) => ({ parameterChoice: { case: 'stringParam' as const, value } });
  const bytesParam = (value: string) => ({ parameterChoice: { case: 'bytesParam' as const, value: Buffer.from(value) } });
  const load = (modelName: string, parameters: Record<string, MessageInitShape<typeof ModelRepositoryParameterSchema>>) =>
    callUnary(client, svc.repositoryModelLoad, create(RepositoryModelLoadRequestSchema, { modelName, parameters }));
  const model = scriptModel('victim', join(base ?? '', 'never'));
  const files = (extra: Record<string, string> = {}) =>
    Object.fromEntries(Object.entries({ ...model.files, ...extra }).map(([path, content]) => [`file:${path}`, bytesParam(content)]));

  it('refuses RepositoryModelLoad with a traversal model_name (INVALID_ARGUMENT) and writes no authorized_keys', async () => {
    const name = `pwned-grpc-${id}`;
    for (const modelName of [`../../${name}`, `../${name}`, '..', `${name}/..`]) {
      const error = await grpcFailure(load(modelName, { config: stringParam(JSON.stringify(model.config)), ...files({ authorized_keys: 'ssh-ed25519 AAAA attacker' }) }));
      expect(error.code, modelName).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toMatch(/^invalid model name/);
    }
    expectNothingWritten(name);
    expectNothingWritten('authorized_keys');
    expect(await node.tmpEntries(OVERRIDE_PREFIX)).toEqual([]);
  });

  it('refuses file: overrides leaving the model folder (INVALID_ARGUMENT) and keeps no temporary folder', async () => {
    const error = await grpcFailure(load('victim', { config: stringParam(JSON.stringify(model.config)), ...files({ [`../../../authorized_keys`]: 'attacker' }) }));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/'\.\.' segment/);
    expectNothingWritten('authorized_keys');
    expect(await node.tmpEntries(OVERRIDE_PREFIX)).toEqual([]);
  });

  it('accepts the standard upload (bytes_param) exactly as HTTP does', async () => {
    const uploaded = scriptModel('grpc_uploaded', join(base, 'grpc-uploaded-ran'));
    const parameters = {
      config: stringParam(JSON.stringify(uploaded.config)),
      ...Object.fromEntries(Object.entries(uploaded.files).map(([path, content]) => [`file:${path}`, bytesParam(content)])),
    };
    await load('grpc_uploaded', parameters);
    expect((await rawCall(node.http, 'GET', '/v2/models/grpc_uploaded/ready')).status).toBe(200);
  });

  it('refuses invalid names in other RPCs', async () => {
    const error = await grpcFailure(callUnary(client, svc.modelMetadata, create(ModelMetadataRequestSchema, { name: 'a/b' })));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/^invalid model name "a\/b"/);
  });
});
