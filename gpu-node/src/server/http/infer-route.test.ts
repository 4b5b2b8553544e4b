import { deflateSync, gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { binaryBody, rawRequest, splitBinaryResponse, startTestServer, type TestServer } from '../../../test/support/test-server.js';
import { abortSignalOf } from '../../server-api/index.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

interface InferJson {
  id?: string;
  model_name: string;
  model_version: string;
  outputs: { name: string; datatype: string; shape: number[]; data?: unknown[]; parameters?: { binary_data_size: number } }[];
  error?: string;
}

const fp32 = (...values: number[]) => Buffer.from(new Float32Array(values).buffer);
const bytesElement = (text: string) => {
  const data = Buffer.from(text);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(data.length);
  return Buffer.concat([length, data]);
};

async function inferJson(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as InferJson };
}

const identityRequest = {
  id: 'r1',
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }],
};

describe('infer: JSON, binary, mixed, raw', () => {
  it('runs a JSON request and answers JSON', async () => {
    const res = await inferJson('/v2/models/identity/infer', identityRequest);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.json).toEqual({
      id: 'r1',
      model_name: 'identity',
      model_version: '1',
      outputs: [{ name: 'INPUT0_OUT', datatype: 'FP32', shape: [1, 4], data: [1, 2, 3, 4] }],
    });
    const request = t.core.callsOf('infer').at(-1)!.args[0] as { modelName: string; inputs: { data: Uint8Array }[] };
    expect(request.modelName).toBe('identity');
    expect(Buffer.from(request.inputs[0]!.data)).toEqual(fp32(1, 2, 3, 4));
  });

  it('passes the URL version to the core', async () => {
    const res = await inferJson('/v2/models/identity/versions/1/infer', identityRequest);
    expect(res.status).toBe(200);
    expect((t.core.callsOf('infer').at(-1)!.args[0] as { modelVersion: string }).modelVersion).toBe('1');
  });

  it('runs a binary request and answers binary when asked', async () => {
    const { body, headerLength } = binaryBody(
      {
        inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], parameters: { binary_data_size: 16 } }],
        parameters: { binary_data_output: true },
      },
      fp32(5, 6, 7, 8),
    );
    const res = await rawRequest(`${t.url}/v2/models/identity/infer`, {
      headers: { 'Inference-Header-Content-Length': headerLength },
      body,
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    const { json, rest } = splitBinaryResponse(res.body, res.headers['inference-header-content-length'] as string);
    expect((json as InferJson).outputs[0]).toMatchObject({ name: 'INPUT0_OUT', parameters: { binary_data_size: 16 } });
    expect(rest).toEqual(fp32(5, 6, 7, 8));
  });

  it('runs a mixed request (one JSON input, one binary) with per-output choices', async () => {
    const { body, headerLength } = binaryBody(
      {
        inputs: [
          { name: 'A', datatype: 'INT32', shape: [1, 2], data: [7, -3] },
          { name: 'B', datatype: 'BYTES', shape: [1, 1], parameters: { binary_data_size: 9 } },
        ],
        outputs: [{ name: 'A_OUT', parameters: { binary_data: true } }, { name: 'B_OUT' }],
      },
      bytesElement('hello'),
    );
    const res = await rawRequest(`${t.url}/v2/models/pair/infer`, {
      headers: { 'Inference-Header-Content-Length': headerLength },
      body,
    });
    expect(res.status).toBe(200);
    const { json, rest } = splitBinaryResponse(res.body, res.headers['inference-header-content-length'] as string);
    const outputs = (json as InferJson).outputs;
    expect(outputs).toEqual([
      { name: 'A_OUT', datatype: 'INT32', shape: [1, 2], parameters: { binary_data_size: 8 } },
      { name: 'B_OUT', datatype: 'BYTES', shape: [1, 1], data: ['hello'] },
    ]);
    expect([...new Int32Array(rest.buffer.slice(rest.byteOffset, rest.byteOffset + 8))]).toEqual([7, -3]);
  });

  it('takes a raw binary body for a single-input model and answers binary', async () => {
    const res = await rawRequest(`${t.url}/v2/models/identity/infer`, {
      headers: { 'Inference-Header-Content-Length': '0', 'Content-Type': 'application/octet-stream' },
      body: fp32(1, 1, 2, 3),
    });
    expect(res.status).toBe(200);
    const { json, rest } = splitBinaryResponse(res.body, res.headers['inference-header-content-length'] as string);
    expect((json as InferJson).outputs[0]).toMatchObject({ name: 'INPUT0_OUT', shape: [1, 4] });
    expect(rest).toEqual(fp32(1, 1, 2, 3));
  });

  it('refuses a raw body for a model with two inputs, and a raw body of the wrong size', async () => {
    const two = await rawRequest(`${t.url}/v2/models/pair/infer`, {
      headers: { 'Inference-Header-Content-Length': '0' },
      body: Buffer.alloc(8),
    });
    expect(two.status).toBe(400);
    expect(JSON.parse(two.body.toString()).error).toMatch(/only have 1 input/);
    const size = await rawRequest(`${t.url}/v2/models/identity/infer`, {
      headers: { 'Inference-Header-Content-Length': '0' },
      body: Buffer.alloc(15),
    });
    expect(size.status).toBe(400);
  });
});

describe('infer: caller mistakes are 400s, core errors keep their status', () => {
  it('rejects malformed and invalid requests with 400', async () => {
    const cases: [unknown, RegExp?][] = [
      ['{"inputs": [', undefined],
      ['', undefined],
      ['[]', undefined],
      [{ inputs: 'x' }, /'inputs' must be an array/],
      [{ inputs: [{ name: 'INPUT0', datatype: 'FP16', shape: [1, 4], data: [1, 2, 3, 4] }] }, /FP16/],
      [{ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4], data: [1, 2] }] }, undefined],
    ];
    for (const [body, message] of cases) {
      const res = await inferJson('/v2/models/identity/infer', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      if (message) expect(res.json.error).toMatch(message);
    }
    expect(t.errors).toEqual([]);
  });

  it('rejects a bad Inference-Header-Content-Length with 400', async () => {
    for (const value of ['abc', '-1', '99999', '1e3']) {
      const res = await rawRequest(`${t.url}/v2/models/identity/infer`, {
        headers: { 'Inference-Header-Content-Length': value },
        body: Buffer.from(JSON.stringify(identityRequest)),
      });
      expect(res.status, value).toBe(400);
    }
  });

  it("answers unknown models with 400 (Triton's INVALID_ARG) and core errors with their mapped status", async () => {
    expect((await inferJson('/v2/models/nope/infer', identityRequest)).status).toBe(400);
    const original = t.core.inferImpl;
    try {
      t.core.inferImpl = () => Promise.reject(TesseraError.unavailable('Request timeout expired'));
      expect((await inferJson('/v2/models/identity/infer', identityRequest)).status).toBe(503);
      t.core.inferImpl = () =>
        Promise.reject(TesseraError.unsupported("HTTP end point doesn't support models with decoupled transaction policy"));
      const decoupled = await inferJson('/v2/models/identity/infer', identityRequest);
      expect(decoupled.status).toBe(501);
      expect(decoupled.json.error).toMatch(/decoupled/);
    } finally {
      t.core.inferImpl = original;
    }
  });
});

describe('infer: compression', () => {
  it('inflates gzip and deflate request bodies', async () => {
    const json = Buffer.from(JSON.stringify(identityRequest));
    for (const [coding, body] of [
      ['gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
    ] as const) {
      const res = await rawRequest(`${t.url}/v2/models/identity/infer`, {
        headers: { 'Content-Encoding': coding, 'Content-Type': 'application/json' },
        body,
      });
      expect(res.status, coding).toBe(200);
      expect(JSON.parse(res.body.toString()).outputs[0].data).toEqual([1, 2, 3, 4]);
    }
  });

  it('compresses the response when the client accepts it', async () => {
    const body = Buffer.from(JSON.stringify(identityRequest));
    const gz = await rawRequest(`${t.url}/v2/models/identity/infer`, { headers: { 'Accept-Encoding': 'gzip' }, body });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(gz.body).toString()).model_name).toBe('identity');
    const df = await rawRequest(`${t.url}/v2/models/identity/infer`, {
      headers: { 'Accept-Encoding': 'deflate, gzip;q=0' },
      body,
    });
    expect(df.headers['content-encoding']).toBe('deflate');
    expect(JSON.parse(inflateSync(df.body).toString()).model_name).toBe('identity');
    const plain = await rawRequest(`${t.url}/v2/models/identity/infer`, { headers: { 'Accept-Encoding': 'identity' }, body });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(plain.body.toString()).model_name).toBe('identity');
  });

  it('answers another Content-Encoding with 501 and corrupt gzip with 400', async () => {
    const body = Buffer.from(JSON.stringify(identityRequest));
    const br = await rawRequest(`${t.url}/v2/models/identity/infer`, { headers: { 'Content-Encoding': 'br' }, body });
    expect(br.status).toBe(501);
    expect(br.headers['accept-encoding']).toBe('gzip, deflate');
    expect(JSON.parse(br.body.toString())).toEqual({ error: 'Unsupported compression type' });
    const bad = await rawRequest(`${t.url}/v2/models/identity/infer`, { headers: { 'Content-Encoding': 'gzip' }, body });
    expect(bad.status).toBe(400);
  });
});

describe('infer: cancellation', () => {
  it('aborts the signal passed to infer when the client disconnects', async () => {
    let entered!: () => void;
    const inferEntered = new Promise<void>((resolve) => (entered = resolve));
    const aborted = new Promise<boolean>((resolve) => {
      t.core.inferImpl = (_request, options) =>
        new Promise((_resolve, reject) => {
          const signal = abortSignalOf(options?.signal);
          if (signal === undefined) return resolve(false);
          signal.addEventListener('abort', () => {
            resolve(true);
            reject(TesseraError.cancelled('cancelled'));
          });
          entered();
        });
    });
    try {
      const controller = new AbortController();
      const pending = fetch(`${t.url}/v2/models/identity/infer`, {
        method: 'POST',
        body: JSON.stringify(identityRequest),
        signal: controller.signal,
      }).catch((error: unknown) => error);
      await inferEntered;
      controller.abort();
      expect(await pending).toBeInstanceOf(Error);
      expect(await aborted).toBe(true);
    } finally {
      t.core.inferImpl = (request) => Promise.resolve(t.core.echo(request));
    }
    // The server is still healthy afterwards, and nothing was logged as our bug.
    expect((await inferJson('/v2/models/identity/infer', identityRequest)).status).toBe(200);
    expect(t.errors).toEqual([]);
  });
});
