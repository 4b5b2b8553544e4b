import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { startTestServer, type TestServer } from '../../../test/support/test-server.js';

let t: TestServer;
const changes: unknown[] = [];

beforeAll(async () => {
  t = await startTestServer({ onLogSettingsChange: (s) => changes.push(s) });
});
afterAll(() => t.close());

// Response.json() is `unknown` in Node's types; the tests read only these members.
interface Body {
  error: string;
  model_stats: { name: string }[];
}
const json = async (res: Response): Promise<Body> => (await res.json()) as Body;

const get = (path: string, init: RequestInit = {}) => fetch(`${t.url}${path}`, init);
const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });

describe('health and metadata', () => {
  it('answers live/ready with 200 and an empty body, 400 and an empty body when not', async () => {
    for (const path of ['/v2/health/live', '/v2/health/ready']) {
      const ok = await get(path);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toBe('');
    }
    t.core.live = false;
    t.core.ready = false;
    try {
      for (const path of ['/v2/health/live', '/v2/health/ready']) {
        const no = await get(path);
        expect(no.status).toBe(400);
        expect(await no.text()).toBe('');
      }
    } finally {
      t.core.live = true;
      t.core.ready = true;
    }
  });

  it('maps a core error while exiting to 503 with an error body', async () => {
    const original = t.core.isLive.bind(t.core);
    t.core.isLive = () => {
      throw TesseraError.unavailable('Server exiting');
    };
    try {
      const res = await get('/v2/health/live');
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: 'Server exiting' });
    } finally {
      t.core.isLive = original;
    }
  });

  it('serves server and model metadata, with and without a version', async () => {
    expect(await (await get('/v2')).json()).toMatchObject({ name: 'triton', version: '2.73.0dev' });
    const meta = await get('/v2/models/identity');
    expect(meta.status).toBe(200);
    expect(meta.headers.get('content-type')).toContain('application/json');
    expect(await meta.json()).toMatchObject({ name: 'identity', versions: ['1'], inputs: [{ name: 'INPUT0' }] });
    expect((await get('/v2/models/identity/versions/1')).status).toBe(200);
    expect(t.core.callsOf('modelMetadata').at(-1)?.args).toEqual(['identity', '1']);
    // Leading zeros are a number, not a different version.
    await get('/v2/models/identity/versions/001');
    expect(t.core.callsOf('modelMetadata').at(-1)?.args).toEqual(['identity', '1']);
  });

  it('answers unknown models with 400, unknown versions with 404, and the core message', async () => {
    const res = await get('/v2/models/nope');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "Request for unknown model: 'nope' is not found" });
    expect((await get('/v2/models/identity/versions/7')).status).toBe(404);
  });

  it('takes digits only as a version segment', async () => {
    for (const path of ['/v2/models/identity/versions/x', '/v2/models/identity/versions/-1', '/v2/models/identity/versions/1a/ready']) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: 'Not Found' });
    }
  });

  it('reports model readiness with empty bodies', async () => {
    const ready = await get('/v2/models/identity/ready');
    expect([ready.status, await ready.text()]).toEqual([200, '']);
    t.core.models.get('identity')!.ready = false;
    try {
      const notReady = await get('/v2/models/identity/versions/1/ready');
      expect([notReady.status, await notReady.text()]).toEqual([400, '']);
    } finally {
      t.core.models.get('identity')!.ready = true;
    }
    expect((await get('/v2/models/nope/ready')).status).toBe(400);
  });

  it('renders the model config as Triton JSON', async () => {
    const res = await get('/v2/models/identity/config');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: 'identity', backend: 'onnxruntime', max_batch_size: 8 });
    expect((await get('/v2/models/nope/versions/1/config')).status).toBe(400);
  });

  it('serves statistics for all models, one model and one version', async () => {
    const all = await json(await get('/v2/models/stats'));
    expect(all.model_stats.map((s) => s.name).sort()).toEqual(['identity', 'pair']);
    const one = await json(await get('/v2/models/pair/stats'));
    expect(one.model_stats).toHaveLength(1);
    const version = await get('/v2/models/pair/versions/1/stats');
    expect(version.status).toBe(200);
    expect(t.core.callsOf('statistics').at(-1)?.args).toEqual(['pair', '1']);
  });
});

describe('generate, trace, logging', () => {
  it('generate maps JSON fields to inputs (batch 1 prepended) and parameters, outputs to fields', async () => {
    const res = await post('/v2/models/identity/generate', { INPUT0: [1, 2, 3, 4], max_tokens: 3, parameters: { note: 'x' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ model_name: 'identity', model_version: '1', INPUT0_OUT: [1, 2, 3, 4] });
    const request = t.core.callsOf('infer').at(-1)?.args[0] as { inputs: { shape: number[] }[]; parameters: unknown };
    expect(request.inputs[0]?.shape).toEqual([1, 4]);
    expect(request.parameters).toEqual({ max_tokens: 3, note: 'x' });
  });

  it('generate_stream answers one SSE event per response', async () => {
    const res = await post('/v2/models/identity/versions/1/generate_stream', { INPUT0: [[1, 2, 3, 4]] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await res.text()).toBe('data: {"model_name":"identity","model_version":"1","INPUT0_OUT":[1,2,3,4]}\n\n');
  });

  it('generate refuses compressed bodies, unknown models, bad parameters and bad inputs before streaming', async () => {
    const gz = await post('/v2/models/identity/generate', { INPUT0: [1, 2, 3, 4] }, { 'Content-Encoding': 'gzip' });
    expect(gz.status).toBe(400);
    expect((await json(gz)).error).toBe("Unsupported content-encoding, only 'identity' is supported.");
    expect((await post('/v2/models/nope/generate_stream', {})).status).toBe(400);
    const nested = await post('/v2/models/identity/generate_stream', { INPUT0: [1, 2, 3, 4], stop: { a: 1 } });
    expect(nested.status).toBe(400);
    expect((await json(nested)).error).toMatch(/'stop' must be a string, a number or a boolean/);
    const reserved = await post('/v2/models/identity/generate', { INPUT0: [1, 2, 3, 4], triton_x: true });
    expect(reserved.status).toBe(400);
    const wrongType = await post('/v2/models/identity/generate', { INPUT0: ['a', 'b', 'c', 'd'] });
    expect(wrongType.status).toBe(400);
  });

  it('reports tracing OFF and refuses to change it', async () => {
    const global = await get('/v2/trace/setting');
    expect(await global.json()).toMatchObject({ trace_level: ['OFF'], trace_rate: '1000' });
    expect((await get('/v2/models/identity/trace/setting')).status).toBe(200);
    expect((await get('/v2/models/nope/trace/setting')).status).toBe(400);
    expect((await get('/v2/models/identity/versions/1/trace/setting')).status).toBe(404);
    expect((await post('/v2/trace/setting', { trace_level: ['TIMESTAMPS'] })).status).toBe(501);
    expect((await post('/v2/trace/setting', '{bad')).status).toBe(400);
  });

  it('gets and updates the log settings', async () => {
    expect(await (await get('/v2/logging')).json()).toMatchObject({ log_info: true, log_verbose_level: 0 });
    const updated = await post('/v2/logging', { log_verbose_level: 2, log_info: false, log_format: 'ISO8601' });
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({ log_verbose_level: 2, log_info: false, log_format: 'ISO8601' });
    expect(changes.at(-1)).toMatchObject({ log_verbose_level: 2 });
    expect((await post('/v2/logging', { log_file: '/tmp/x' })).status).toBe(501);
    const badType = await post('/v2/logging', { log_info: 'yes' });
    expect(badType.status).toBe(400);
    const unknown = await post('/v2/logging', { log_colour: true });
    expect((await json(unknown)).error).toContain("'log_colour'");
    // A rejected update changes nothing.
    expect(await (await get('/v2/logging')).json()).toMatchObject({ log_verbose_level: 2, log_info: false });
  });
});

describe('repository extension', () => {
  it('lists the index, honouring ready', async () => {
    const res = await post('/v2/repository/index', { ready: true });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(expect.arrayContaining([{ name: 'identity', version: '1', state: 'READY' }]));
    expect(t.core.callsOf('repositoryIndex').at(-1)?.args).toEqual([true]);
    expect((await post('/v2/repository/index')).status).toBe(200);
    expect(t.core.callsOf('repositoryIndex').at(-1)?.args).toEqual([false]);
    expect((await post('/v2/repository/index', { ready: 'yes' })).status).toBe(400);
  });

  it('loads with config and base64 file overrides', async () => {
    const config = JSON.stringify({ backend: 'onnxruntime' });
    const res = await post('/v2/repository/models/m1/load', {
      parameters: { config, 'file:1/model.onnx': Buffer.from([1, 2, 3]).toString('base64') },
    });
    expect([res.status, await res.text()]).toEqual([200, '']);
    const [name, options] = t.core.callsOf('loadModel').at(-1)!.args as [string, { configJson: string; files: Map<string, Uint8Array> }];
    expect(name).toBe('m1');
    expect(options.configJson).toBe(config);
    // Keyed by the model-relative path, as over gRPC: the `file:` prefix is the parameter's, not the file's.
    expect([...options.files.keys()]).toEqual(['1/model.onnx']);
    expect([...options.files.get('1/model.onnx')!]).toEqual([1, 2, 3]);
    expect((await post('/v2/repository/models/m1/load')).status).toBe(200);
  });

  it('rejects bad load bodies with 400 naming the problem', async () => {
    const cases: [unknown, RegExp][] = [
      [{ parameters: { config: 5 } }, /'config' must be a JSON string/],
      [{ parameters: { foo: 'bar' } }, /unexpected load parameter 'foo'/],
      [{ parameters: { 'file:1/m.onnx': 'AAAA' } }, /must also set 'config'/],
      [{ parameters: { config: '{}', 'file:1/m.onnx': 'not base64!' } }, /not valid base64/],
      [{ parameters: { config: '{}', 'file:../../x': 'AAAA' } }, /invalid file override "file:..\/..\/x": .*'\.\.' segment/],
      [{ parameters: { config: '{}', 'file:/etc/x': 'AAAA' } }, /must be relative/],
      [{ parameters: { config: '{}', 'file:1\\m.onnx': 'AAAA' } }, /contains '\\'/],
      [{ parameters: { config: '{}', 'file:1/m\u0000.onnx': 'AAAA' } }, /NUL or a control character/],
      [{ parameters: { config: '{}', 'file:': 'AAAA' } }, /the path is empty/],
      [{ parameters: { config: '{}', 'file:1/a': 'AAAA', 'file:1//a': 'AAAA' } }, /another override names the same file/],
      [{ parameters: [] }, /must be a JSON object/],
      [[1, 2], /must be a JSON object/],
      ['{"parameters":', /failed to parse/],
    ];
    for (const [body, message] of cases) {
      const res = await post('/v2/repository/models/m1/load', body);
      expect(res.status).toBe(400);
      expect((await json(res)).error).toMatch(message);
    }
  });

  it('unloads, passing unload_dependents', async () => {
    const res = await post('/v2/repository/models/m1/unload', { parameters: { unload_dependents: true } });
    expect(res.status).toBe(200);
    expect(t.core.callsOf('unloadModel').at(-1)?.args).toEqual(['m1', { unloadDependents: true }]);
    expect((await post('/v2/repository/models/m1/unload', { parameters: { unload_dependents: 1 } })).status).toBe(400);
  });

  it('passes core errors through their status (503 outside explicit mode)', async () => {
    const original = t.core.loadModel.bind(t.core);
    t.core.loadModel = () => Promise.reject(TesseraError.unavailable('explicit model load / unload is not allowed if polling is enabled'));
    try {
      const res = await post('/v2/repository/models/m1/load');
      expect(res.status).toBe(503);
      expect((await json(res)).error).toMatch(/polling is enabled/);
    } finally {
      t.core.loadModel = original;
    }
  });

  it('refuses a named repository with 501', async () => {
    for (const path of ['/v2/repository/r1/index', '/v2/repository/r1/models/m/load', '/v2/repository/r1/models/m/unload']) {
      const res = await post(path, {});
      expect(res.status).toBe(501);
      expect((await json(res)).error).toBe("'repository_name' specification is not supported");
    }
  });
});

describe('shared memory', () => {
  it('has no regions, refuses registration, and unregisters idempotently', async () => {
    for (const kind of ['system', 'cuda']) {
      const status = await get(`/v2/${kind}sharedmemory/status`);
      expect([status.status, await status.json()]).toEqual([200, []]);
      expect((await get(`/v2/${kind}sharedmemory/region/r/status`)).status).toBe(404);
      const register = await post(`/v2/${kind}sharedmemory/region/r/register`, { key: '/k', offset: 0, byte_size: 4 });
      expect(register.status).toBe(501);
      expect((await json(register)).error).toBe(`${kind} shared memory is not supported by Tessera`);
      expect((await post(`/v2/${kind}sharedmemory/unregister`)).status).toBe(200);
      expect((await post(`/v2/${kind}sharedmemory/region/r/unregister`)).status).toBe(200);
    }
  });
});

describe('methods and paths', () => {
  it('answers a known path with the wrong method with 405', async () => {
    const cases: [string, string][] = [
      ['POST', '/v2/health/live'],
      ['DELETE', '/v2'],
      ['GET', '/v2/models/identity/infer'],
      ['PUT', '/v2/models/identity/versions/1'],
      ['GET', '/v2/repository/index'],
      ['GET', '/v2/repository/models/m/load'],
      ['POST', '/v2/models/stats'],
      ['GET', '/v2/systemsharedmemory/region/r/register'],
    ];
    for (const [method, path] of cases) {
      const res = await fetch(`${t.url}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(await res.json()).toEqual({ error: 'Method Not Allowed' });
    }
  });

  it('answers unknown paths with 404', async () => {
    for (const path of ['/', '/v1/nothing', '/v2/', '/v2/models', '/v2/models/identity/foo', '/v2/healthz']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ error: 'Not Found' });
    }
  });

  it('answers an unsupported Content-Encoding with 501 and Accept-Encoding', async () => {
    const res = await post('/v2/repository/index', '{}', { 'Content-Encoding': 'br' });
    expect(res.status).toBe(501);
    expect(res.headers.get('accept-encoding')).toBe('gzip, deflate');
    expect(await res.json()).toEqual({ error: 'Unsupported compression type' });
  });

  it('turns a non-Tessera exception into a logged 500', async () => {
    const original = t.core.serverMetadata.bind(t.core);
    t.core.serverMetadata = () => {
      throw new RangeError('boom');
    };
    try {
      const res = await get('/v2');
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'boom' });
      expect(t.errors.at(-1)?.message).toMatch(/unexpected exception/);
    } finally {
      t.core.serverMetadata = original;
      t.errors.length = 0;
    }
  });
});
