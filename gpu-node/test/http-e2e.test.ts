/**
 * End to end over HTTP: every route of triton-protocol.md 1.1 against a real node started on port 0
 * with the example repository (simple, simple_identity, ts_scale), with `fetch` (and node:http where
 * the socket must be controlled) as the client and our KServe codecs on the client side only.
 *
 * The node runs in the default NONE control mode; the repository load/unload routes in EXPLICIT mode
 * are in http-explicit-e2e.test.ts.
 */
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeInferResponseBody,
  encodeInferRequestBody,
} from '../../shared/src/kserve/index.js';
import { decodeBytesElements, encodeBytesElements } from '../../shared/src/tensors/index.js';
import type { InferRequest } from '../../shared/src/tensors/index.js';
import {
  exampleRepository,
  fp32Bytes,
  fp32Values,
  int32Bytes,
  int32Values,
  parsePrometheus,
  removeDir,
  startTestNode,
  type TestNode,
} from './support.js';
import { call, expectError, json, type Answer } from './http-client.js';

const MAX_INPUT = 64 * 1024; // --http-max-input-size for the main node, so "too large" is cheap to send
const A = Array.from({ length: 16 }, (_, i) => i);
const B = Array.from({ length: 16 }, (_, i) => 100 - i * 3);
const SUM = A.map((a, i) => a + (B[i] ?? 0));
const DIFF = A.map((a, i) => a - (B[i] ?? 0));

let node: TestNode;
let repo: string | undefined;

beforeAll(async () => {
  repo = await exampleRepository(['simple', 'simple_identity', 'ts_scale']);
  node = await startTestNode(repo, ['--http-max-input-size', String(MAX_INPUT)]);
});

afterAll(async () => {
  await node?.stop();
  await removeDir(repo);
});

const get = (path: string): Promise<Answer> => call(node.http, 'GET', path);
const post = (path: string, body?: string | Uint8Array, headers?: Record<string, string>): Promise<Answer> =>
  call(node.http, 'POST', path, body, headers);

function simpleJson(overrides: Record<string, unknown> = {}, input0: Record<string, unknown> = {}): string {
  return JSON.stringify({
    inputs: [
      { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: A, ...input0 },
      { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: B },
    ],
    ...overrides,
  });
}

/** A body of JSON header + binary sections with its Inference-Header-Content-Length. */
function binaryBody(header: unknown, ...sections: Uint8Array[]): { body: Uint8Array; headers: Record<string, string> } {
  const head = Buffer.from(JSON.stringify(header));
  return {
    body: Buffer.concat([head, ...sections]),
    headers: { 'Inference-Header-Content-Length': String(head.length) },
  };
}

function decoded(answer: Answer) {
  expect(answer.status, answer.text).toBe(200);
  return decodeInferResponseBody(answer.body, answer.headers.get('inference-header-content-length'));
}

describe('health, server and model metadata', () => {
  it('live and ready answer 200 with an empty body when every model is READY', async () => {
    for (const path of ['/v2/health/live', '/v2/health/ready']) {
      const answer = await get(path);
      expect(answer.status).toBe(200);
      expect(answer.body.byteLength).toBe(0);
    }
  });

  it('GET /v2 reports the server name, protocol version and extensions', async () => {
    const answer = await get('/v2');
    expect(answer.status).toBe(200);
    const meta = json(answer) as { name: string; version: string; extensions: string[] };
    expect(meta.name).toBe('triton');
    expect(meta.version).toBe('2.73.0dev');
    expect(meta.extensions).toEqual(expect.arrayContaining(['model_repository', 'binary_tensor_data', 'statistics']));
  });

  it('model metadata, with and without a version, lists inputs/outputs with the -1 batch dimension', async () => {
    const expected = {
      name: 'simple',
      versions: ['1'],
      platform: 'onnxruntime_onnx',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'INPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [-1, 16] },
        { name: 'OUTPUT1', datatype: 'INT32', shape: [-1, 16] },
      ],
    };
    expect(json(await get('/v2/models/simple'))).toEqual(expected);
    expect(json(await get('/v2/models/simple/versions/1'))).toEqual(expected);
    const identity = json(await get('/v2/models/simple_identity')) as { inputs: unknown[] };
    expect(identity.inputs).toEqual([{ name: 'INPUT0', datatype: 'BYTES', shape: [-1, -1] }]);
    // The typescript backend has no platform: Triton reports the backend name instead.
    expect((json(await get('/v2/models/ts_scale')) as { platform: string }).platform).toBe('typescript');
  });

  it('unknown model: 400 (Triton INVALID_ARG), unknown version: 404, naming it, for metadata, ready and config', async () => {
    expectError(await get('/v2/models/nope'), 400, /unknown model: 'nope'/);
    expectError(await get('/v2/models/simple/versions/7'), 404, /'simple' version 7/);
    expectError(await get('/v2/models/nope/ready'), 400, /'nope'/);
    expectError(await get('/v2/models/simple/versions/7/ready'), 404, /'simple' version 7/);
    expectError(await get('/v2/models/nope/config'), 400, /'nope'/);
  });

  it('model ready answers 200 with an empty body, with and without a version', async () => {
    for (const path of ['/v2/models/simple/ready', '/v2/models/simple/versions/1/ready', '/v2/models/ts_scale/ready']) {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.body.byteLength).toBe(0);
    }
  });

  it('config is the normalized ModelConfig as Triton JSON (snake_case, enum names, numbers)', async () => {
    for (const path of ['/v2/models/simple/config', '/v2/models/simple/versions/1/config']) {
      const config = json(await get(path)) as Record<string, unknown>;
      expect(config).toMatchObject({
        name: 'simple',
        platform: 'onnxruntime_onnx',
        max_batch_size: 8,
        version_policy: { latest: { num_versions: 1 } },
        input: [
          { name: 'INPUT0', data_type: 'TYPE_INT32', dims: [16] },
          { name: 'INPUT1', data_type: 'TYPE_INT32', dims: [16] },
        ],
        output: [
          { name: 'OUTPUT0', data_type: 'TYPE_INT32', dims: [16] },
          { name: 'OUTPUT1', data_type: 'TYPE_INT32', dims: [16] },
        ],
      });
      expect((config['instance_group'] as unknown[]).length).toBeGreaterThan(0);
    }
    const ts = json(await get('/v2/models/ts_scale/config')) as Record<string, unknown>;
    expect(ts).toMatchObject({ backend: 'typescript', parameters: { factor: { string_value: '2' } } });
  });
});

describe('inference', () => {
  it('JSON in, JSON out: sum and difference, id echoed, version as a string', async () => {
    const answer = await post('/v2/models/simple/infer', simpleJson({ id: 'json-1' }));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/application\/json/);
    expect(json(answer)).toEqual({
      id: 'json-1',
      model_name: 'simple',
      model_version: '1',
      outputs: [
        { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: SUM },
        { name: 'OUTPUT1', datatype: 'INT32', shape: [1, 16], data: DIFF },
      ],
    });
  });

  it('the versioned infer URL serves that version', async () => {
    const answer = await post('/v2/models/simple/versions/1/infer', simpleJson());
    expect((json(answer) as { model_version: string }).model_version).toBe('1');
  });

  it('binary in and out (our client codec): every input binary, binary_data_output for the outputs', async () => {
    const request: InferRequest = {
      id: 'bin-1',
      modelName: 'simple',
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [2, 16], data: int32Bytes([...A, ...B]) },
        { name: 'INPUT1', datatype: 'INT32', shape: [2, 16], data: int32Bytes([...B, ...A]) },
      ],
      parameters: {},
    };
    const encoded = encodeInferRequestBody(request, { binaryDataOutput: true });
    const answer = await post('/v2/models/simple/infer', encoded.body, encoded.headers);
    expect(answer.headers.get('content-type')).toBe('application/octet-stream');
    const response = decoded(answer);
    expect(response.id).toBe('bin-1');
    const [out0, out1] = response.outputs;
    expect(out0?.shape).toEqual([2, 16]);
    expect(int32Values(out0?.data ?? new Uint8Array())).toEqual([...SUM, ...SUM]);
    expect(int32Values(out1?.data ?? new Uint8Array())).toEqual([...DIFF, ...DIFF.map((d) => -d)]);
  });

  it('mixed: one JSON input and one binary input; only the requested output, in binary', async () => {
    const { body, headers } = binaryBody(
      {
        inputs: [
          { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
          { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: B },
        ],
        outputs: [{ name: 'OUTPUT1', parameters: { binary_data: true } }],
      },
      int32Bytes(A),
    );
    const answer = await post('/v2/models/simple/infer', body, headers);
    const response = decoded(answer);
    expect(response.outputs.map((o) => o.name)).toEqual(['OUTPUT1']);
    expect(int32Values(response.outputs[0]?.data ?? new Uint8Array())).toEqual(DIFF);
    const head = JSON.parse(answer.text.slice(0, Number(answer.headers.get('inference-header-content-length'))));
    expect(head.outputs[0].parameters).toEqual({ binary_data_size: 64 });
  });

  it('requested outputs as JSON; per-output binary_data:false overrides binary_data_output:true', async () => {
    const answer = await post(
      '/v2/models/simple/infer',
      simpleJson({ parameters: { binary_data_output: true }, outputs: [{ name: 'OUTPUT0', parameters: { binary_data: false } }] }),
    );
    expect(answer.headers.get('content-type')).toMatch(/application\/json/);
    expect((json(answer) as { outputs: unknown[] }).outputs).toEqual([
      { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 16], data: SUM },
    ]);
  });

  it('a gzip request body is accepted, and the answer is gzip when the client accepts it', async () => {
    const answer = await fetch(`${node.http}/v2/models/simple/infer`, {
      method: 'POST',
      headers: { 'Content-Encoding': 'gzip', 'Accept-Encoding': 'gzip' },
      body: gzipSync(simpleJson({ id: 'gz' })),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-encoding')).toBe('gzip');
    // fetch inflates the body for us.
    expect((await answer.json()) as unknown).toMatchObject({ id: 'gz', outputs: [{ name: 'OUTPUT0', data: SUM }, { name: 'OUTPUT1', data: DIFF }] });
  });

  it('raw binary body (Inference-Header-Content-Length: 0) is the single input; outputs come back binary', async () => {
    const answer = await post('/v2/models/ts_scale/infer', fp32Bytes([1.5, -2, 4]), { 'Inference-Header-Content-Length': '0' });
    const response = decoded(answer);
    expect(response.outputs[0]).toMatchObject({ name: 'OUTPUT0', datatype: 'FP32', shape: [1, 3] });
    expect(fp32Values(response.outputs[0]?.data ?? new Uint8Array())).toEqual([3, -4, 8]);
  });

  it('a raw body to a model with two inputs is refused, naming the model', async () => {
    expectError(
      await post('/v2/models/simple/infer', int32Bytes(A), { 'Inference-Header-Content-Length': '0' }),
      400,
      /'simple'/,
    );
  });

  it('BYTES as JSON strings (UTF-8 kept) and as length-prefixed binary', async () => {
    const jsonAnswer = await post(
      '/v2/models/simple_identity/infer',
      JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [2, 1], datatype: 'BYTES', data: ['héllo', ''] }] }),
    );
    expect(jsonAnswer.status, jsonAnswer.text).toBe(200);
    expect((json(jsonAnswer) as { outputs: unknown[] }).outputs).toEqual([
      { name: 'OUTPUT0', datatype: 'BYTES', shape: [2, 1], data: ['héllo', ''] },
    ]);

    const elements = [new TextEncoder().encode('∑ bytes'), new TextEncoder().encode('tessera')];
    const encoded = encodeInferRequestBody(
      { id: '', modelName: 'simple_identity', inputs: [{ name: 'INPUT0', datatype: 'BYTES', shape: [2, 1], data: encodeBytesElements(elements) }], parameters: {} },
      { binaryDataOutput: true },
    );
    const response = decoded(await post('/v2/models/simple_identity/infer', encoded.body, encoded.headers));
    expect(response.outputs[0]?.datatype).toBe('BYTES');
    expect(decodeBytesElements(response.outputs[0]?.data ?? new Uint8Array(), 2)).toEqual(elements);
  });

  // BYTES that onnxruntime string tensors cannot hold (NUL, not UTF-8): bytes-exact-e2e.test.ts.

  it('FP32 JSON on the typescript backend (ts_scale doubles)', async () => {
    const answer = await post(
      '/v2/models/ts_scale/infer',
      JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [2, 2], datatype: 'FP32', data: [[1, 2], [3, 0.5]] }] }),
    );
    expect((json(answer) as { outputs: unknown[] }).outputs).toEqual([
      { name: 'OUTPUT0', datatype: 'FP32', shape: [2, 2], data: [2, 4, 6, 1] },
    ]);
  });
});

describe('bad inference requests: Triton status and a message naming the problem', () => {
  const infer = (body: string | Uint8Array, headers?: Record<string, string>) => post('/v2/models/simple/infer', body, headers);

  it('malformed JSON → 400', async () => {
    expectError(await infer('{"inputs": [}'), 400, /JSON/);
  });

  it('unknown model → 400 with Triton\'s wording, unknown version → 404', async () => {
    expectError(await post('/v2/models/nope/infer', simpleJson()), 400, /^Request for unknown model: 'nope' is not found$/);
    expectError(await post('/v2/models/simple/versions/9/infer', simpleJson()), 404, /'simple' version 9/);
  });

  it('wrong input name → 400 naming the input', async () => {
    expectError(await infer(simpleJson({}, { name: 'INPUTX' })), 400, /'INPUTX'/);
  });

  it('missing input → 400 naming the missing one', async () => {
    const body = JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 16], datatype: 'INT32', data: A }] });
    expectError(await infer(body), 400, /missing required input\(s\) \['INPUT1'\]/);
  });

  it('wrong shape → 400 with the expected and actual shapes', async () => {
    expectError(
      await infer(simpleJson({}, { shape: [1, 8], data: A.slice(0, 8) })),
      400,
      /unexpected shape for input 'INPUT0' for model 'simple'\. Expected \[-1,16\], got \[1,8\]/,
    );
  });

  it('batch larger than max_batch_size → 400', async () => {
    const nine = (name: string) => ({ name, shape: [9, 16], datatype: 'INT32', data: new Array(144).fill(1) });
    expectError(await infer(JSON.stringify({ inputs: [nine('INPUT0'), nine('INPUT1')] })), 400, /batch-size must be <= 8/);
  });

  it('wrong datatype → 400 naming both types', async () => {
    expectError(await infer(simpleJson({}, { datatype: 'FP32' })), 400, /'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'/);
  });

  it('element count that does not match the shape → 400', async () => {
    expectError(await infer(simpleJson({}, { data: A.slice(0, 15) })), 400, /INPUT0.*16.*15|15.*16/);
  });

  it('unknown requested output → 400 naming it', async () => {
    expectError(await infer(simpleJson({ outputs: [{ name: 'NOPE' }] })), 400, /'NOPE'/);
  });

  it("a request parameter starting with 'triton_' → 400 (reserved)", async () => {
    expectError(await infer(simpleJson({ parameters: { triton_x: 1 } })), 400, /'triton_x'.*reserved/);
  });

  it('FP16 in JSON → 400 pointing to the binary format', async () => {
    const body = JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 2], datatype: 'FP16', data: [1, 2] }] });
    expectError(await post('/v2/models/ts_scale/infer', body), 400, /FP16 data via JSON is not supported.*binary/);
  });

  const binaryHeader = {
    inputs: [
      { name: 'INPUT0', shape: [1, 16], datatype: 'INT32', parameters: { binary_data_size: 64 } },
      { name: 'INPUT1', shape: [1, 16], datatype: 'INT32', data: B },
    ],
  };

  it('binary section shorter than binary_data_size → 400 "unexpected size for input"', async () => {
    const { body, headers } = binaryBody(binaryHeader, int32Bytes(A).subarray(0, 60));
    expectError(await infer(body, headers), 400, /unexpected size for input 'INPUT0'/);
  });

  it('bytes left after the last binary section → 400 "unexpected additional input data"', async () => {
    const { body, headers } = binaryBody(binaryHeader, int32Bytes(A), new Uint8Array(4));
    expectError(await infer(body, headers), 400, /unexpected additional input data for model 'simple'/);
  });

  it('binary inputs without Inference-Header-Content-Length → 400 (the JSON parser meets the binary)', async () => {
    const { body } = binaryBody(binaryHeader, int32Bytes(A));
    expectError(await infer(body), 400, /JSON/);
  });

  it.each(['abc', '-1', '99999', '1.5'])('Inference-Header-Content-Length %s → 400 naming the header', async (value) => {
    const { body } = binaryBody(binaryHeader, int32Bytes(A));
    expectError(await infer(body, { 'Inference-Header-Content-Length': value }), 400, /Inference-Header-Content-Length/i);
  });

  it('JSON larger than --http-max-input-size → 400 naming the flag', async () => {
    const body = simpleJson({ id: 'x'.repeat(MAX_INPUT) });
    expectError(await infer(body), 400, /exceeds the maximum allowed value of 65536 bytes.*--http-max-input-size/);
  });

  it('a declared Content-Length over the 1 GiB body limit is refused before the body is sent', async () => {
    // node:http so the body is never sent: the server must answer from the headers alone.
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const url = new URL(`${node.http}/v2/models/simple/infer`);
      const req = httpRequest(
        { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'Content-Length': String(2 ** 30 + 1), 'Content-Type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
            req.destroy();
          });
        },
      );
      req.on('error', reject);
      req.flushHeaders();
      req.write('{'); // a byte, then nothing more
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text).error).toMatch(/exceeds the maximum allowed value of 1073741824 bytes/);
  });

  it('an unsupported Content-Encoding → 501 with Accept-Encoding', async () => {
    const answer = await infer(simpleJson(), { 'Content-Encoding': 'br' });
    expectError(answer, 501, /Unsupported compression type/);
    expect(answer.headers.get('accept-encoding')).toBe('gzip, deflate');
  });
});

describe('statistics and metrics agree with the work done', () => {
  interface Stats {
    name: string;
    version: string;
    inference_count: number;
    execution_count: number;
    inference_stats: Record<string, { count: number; ns: number }>;
  }
  const statsOf = async (path: string): Promise<Stats[]> => {
    const answer = await get(path);
    expect(answer.status, answer.text).toBe(200);
    return (json(answer) as { model_stats: Stats[] }).model_stats;
  };

  it('stats for all, one model and one version report the same counters; a fresh batch of work adds up', async () => {
    const before = (await statsOf('/v2/models/simple/stats'))[0];
    expect(before).toBeDefined();
    // Three requests, one with batch 2: 3 successes, 4 inferences (batch elements).
    await post('/v2/models/simple/infer', simpleJson());
    await post('/v2/models/simple/infer', simpleJson());
    const two = { name: 'INPUT0', shape: [2, 16], datatype: 'INT32', data: [...A, ...A] };
    const answer = await post('/v2/models/simple/infer', JSON.stringify({ inputs: [two, { ...two, name: 'INPUT1' }] }));
    expect(answer.status).toBe(200);

    const [all, model, version] = await Promise.all([
      statsOf('/v2/models/stats'),
      statsOf('/v2/models/simple/stats'),
      statsOf('/v2/models/simple/versions/1/stats'),
    ]);
    expect(all.map((s) => s.name).sort()).toEqual(['simple', 'simple_identity', 'ts_scale']);
    const fromAll = all.find((s) => s.name === 'simple');
    expect(model).toHaveLength(1);
    expect(version).toHaveLength(1);
    const after = model[0] as Stats;
    expect(after).toMatchObject({ name: 'simple', version: '1' });
    expect(fromAll?.inference_count).toBe(after.inference_count);
    expect(version[0]?.inference_count).toBe(after.inference_count);
    expect(after.inference_count - (before?.inference_count ?? 0)).toBe(4);
    expect(after.inference_stats['success']?.count).toBe((before?.inference_stats['success']?.count ?? 0) + 3);
    expect(after.execution_count).toBeGreaterThan(before?.execution_count ?? 0);
    expect(after.execution_count - (before?.execution_count ?? 0)).toBeLessThanOrEqual(3);
  });

  it('stats of an unknown model or version are an error naming it', async () => {
    expectError(await get('/v2/models/nope/stats'), 400, /requested model 'nope' is not available/);
    const version = await get('/v2/models/simple/versions/9/stats');
    expect([400, 404]).toContain(version.status);
    expect(version.text).toMatch(/simple/);
  });

  it('the metrics port serves Prometheus text whose counters equal the statistics', async () => {
    const stats = await statsOf('/v2/models/stats');
    const response = await fetch(node.metrics);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const samples = parsePrometheus(await response.text());
    for (const s of stats) {
      const labels = `{model="${s.name}",version="${s.version}"}`;
      expect(samples.get(`nv_inference_count${labels}`), s.name).toBe(s.inference_count);
      expect(samples.get(`nv_inference_exec_count${labels}`), s.name).toBe(s.execution_count);
      expect(samples.get(`nv_inference_request_success${labels}`), s.name).toBe(s.inference_stats['success']?.count);
      const failures = ['REJECTED', 'CANCELED', 'BACKEND', 'OTHER'].reduce(
        (sum, reason) => sum + (samples.get(`nv_inference_request_failure{model="${s.name}",version="${s.version}",reason="${reason}"}`) ?? 0),
        0,
      );
      expect(failures, s.name).toBe(s.inference_stats['fail']?.count);
    }
    expect(samples.get('nv_inference_count{model="simple",version="1"}')).toBeGreaterThan(0);
    // Triton serves /metrics/ too; anything else on the metrics port is 404.
    expect((await fetch(node.metrics + '/')).status).toBe(200);
    expect((await fetch(node.metrics.replace('/metrics', '/v2'))).status).toBe(404);
  });
});

describe('repository, trace, logging, shared memory and routing', () => {
  it('repository index lists every model READY; load/unload outside explicit mode → 503', async () => {
    const index = json(await post('/v2/repository/index')) as unknown[];
    expect(index).toEqual(
      expect.arrayContaining([
        { name: 'simple', version: '1', state: 'READY' },
        { name: 'simple_identity', version: '1', state: 'READY' },
        { name: 'ts_scale', version: '1', state: 'READY' },
      ]),
    );
    expect(json(await post('/v2/repository/index', '{"ready":true}'))).toHaveLength(3);
    expectError(await post('/v2/repository/models/simple/load'), 503, /explicit model load \/ unload is not allowed/);
    expectError(await post('/v2/repository/models/simple/unload'), 503, /explicit model load \/ unload is not allowed/);
    expectError(await post('/v2/repository/other/index'), 501, /'repository_name' specification is not supported/);
  });

  it('trace settings: GET reports tracing OFF (global and per model); POST → 501', async () => {
    for (const path of ['/v2/trace/setting', '/v2/models/simple/trace/setting']) {
      const answer = await get(path);
      expect(answer.status).toBe(200);
      expect(json(answer)).toMatchObject({ trace_level: ['OFF'], trace_rate: '1000', trace_count: '-1', log_frequency: '0' });
    }
    expectError(await post('/v2/trace/setting', '{"trace_level":["TIMESTAMPS"]}'), 501, /trac/);
    expectError(await post('/v2/models/simple/trace/setting', '{"trace_rate":"10"}'), 501, /trac/);
    // Triton's per-model trace route takes no version: with one the path is unknown.
    expect((await get('/v2/models/simple/versions/1/trace/setting')).status).toBe(404);
    expectError(await get('/v2/models/nope/trace/setting'), 400, /nope/);
  });

  it('logging: GET returns the settings, POST applies and returns them, log_file is read-only (501)', async () => {
    expect(json(await get('/v2/logging'))).toMatchObject({ log_info: true, log_warning: true, log_error: true, log_verbose_level: 0 });
    const updated = await post('/v2/logging', '{"log_verbose_level":1}');
    expect(json(updated)).toMatchObject({ log_verbose_level: 1 });
    expect(json(await get('/v2/logging'))).toMatchObject({ log_verbose_level: 1 });
    expectError(await post('/v2/logging', '{"log_file":"/tmp/x"}'), 501, /log file/);
    expectError(await post('/v2/logging', '{"log_info":"yes"}'), 400, /log_info/);
    await post('/v2/logging', '{"log_verbose_level":0}');
  });

  it('shared memory (system and CUDA): status [], named region 404, register 501, unregister 200', async () => {
    for (const kind of ['system', 'cuda']) {
      const base = `/v2/${kind}sharedmemory`;
      expect(json(await get(`${base}/status`))).toEqual([]);
      expectError(await get(`${base}/region/r0/status`), 404, /'r0'/);
      expectError(await post(`${base}/region/r0/register`, '{"key":"k","offset":0,"byte_size":8}'), 501, /shared memory/);
      expect((await post(`${base}/unregister`)).status).toBe(200);
      expect((await post(`${base}/region/r0/unregister`)).status).toBe(200);
    }
  });

  it('wrong method → 405, unknown path → 404, generate on an ordinary model', async () => {
    const wrong = await call(node.http, 'POST', '/v2/health/live');
    expect(wrong.status).toBe(405);
    expect(json(wrong)).toEqual({ error: 'Method Not Allowed' });
    const unknown = await get('/v2/nothing/here');
    expect(unknown.status).toBe(404);
    expect(json(unknown)).toEqual({ error: 'Not Found' });
    // The generate extension serves non-decoupled models too: batch 1 prepended, outputs by name.
    const generated = await post('/v2/models/simple/generate', JSON.stringify({ INPUT0: A, INPUT1: B }));
    expect(generated.status).toBe(200);
    expect(json(generated)).toMatchObject({ model_name: 'simple', model_version: '1', OUTPUT0: SUM });
    // A request the model refuses before answering is an ordinary error, not a stream.
    expectError(await post('/v2/models/simple/versions/1/generate_stream', '{}'), 400, /input/);
  });
});
