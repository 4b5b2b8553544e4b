import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../../../gpu-node/test/support/test-server.js';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { encodeInferResponse } from '../../../../shared/src/kserve/index.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { createHttpInferClient } from './http-client.js';
import type { InferClient } from './infer-client.js';

const fp32 = (...values: number[]): Uint8Array => new Uint8Array(new Float32Array(values).buffer);

const identity = (id: string, ...values: number[]): InferRequest => ({
  id,
  modelName: 'identity',
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, values.length], data: fp32(...values) }],
  parameters: {},
});

describe('createHttpInferClient against the node HTTP server', () => {
  let t: TestServer;
  let client: InferClient;

  beforeAll(async () => {
    t = await startTestServer();
    client = createHttpInferClient('127.0.0.1', t.port, 4);
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  it('round-trips binary tensors', async () => {
    const result = await client.infer(identity('r1', 1, 2, 3, 4));
    expect(result.response).toMatchObject({ id: 'r1', modelName: 'identity', modelVersion: '1' });
    const [output] = result.response.outputs;
    expect(output).toMatchObject({ name: 'INPUT0_OUT', datatype: 'FP32', shape: [1, 4] });
    expect(Array.from(new Float32Array(new Uint8Array(output!.data).buffer))).toEqual([1, 2, 3, 4]);
    expect(result.sendUs).toBeGreaterThanOrEqual(0);
    expect(result.recvUs).toBeGreaterThanOrEqual(0);
    const seen = t.core.callsOf('infer').at(-1)?.args[0] as InferRequest;
    expect(Buffer.from(seen.inputs[0]!.data)).toEqual(Buffer.from(fp32(1, 2, 3, 4)));
  });

  it('serves concurrent callers beyond its connections, each with its own answer', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => client.infer(identity(`c${i}`, i, i + 1))));
    expect(results.map((r) => r.response.id)).toEqual(Array.from({ length: 10 }, (_, i) => `c${i}`));
    expect(results.map((r) => Array.from(new Float32Array(new Uint8Array(r.response.outputs[0]!.data).buffer)))).toEqual(
      Array.from({ length: 10 }, (_, i) => [i, i + 1]),
    );
  });

  it('round-trips JSON tensors with json: true', async () => {
    const jsonClient = createHttpInferClient('127.0.0.1', t.port, 1, { json: true });
    try {
      const result = await jsonClient.infer(identity('j1', 0.5, -2));
      expect(Array.from(new Float32Array(new Uint8Array(result.response.outputs[0]!.data).buffer))).toEqual([0.5, -2]);
    } finally {
      await jsonClient.close();
    }
  });

  it('turns an error answer into a TesseraError with the server message', async () => {
    const error = await client.infer({ ...identity('e1', 1), modelName: 'missing' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TesseraError);
    expect(error).toMatchObject({ code: 'INVALID_ARG', message: "Request for unknown model: 'missing' is not found" });
  });
});

describe('createHttpInferClient on the wire', () => {
  let server: Server;
  let port: number;
  const seen: { url: string; headers: IncomingHttpHeaders; body: Buffer }[] = [];

  beforeAll(async () => {
    // Records each request and answers a binary KServe response echoing the id, sent chunked.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        seen.push({ url: req.url ?? '', headers: req.headers, body });
        const encoded = encodeInferResponse(
          { id: `answer-${seen.length}`, modelName: 'm', modelVersion: '3', outputs: [{ name: 'OUT', datatype: 'INT32', shape: [2], data: new Uint8Array([1, 0, 0, 0, 2, 0, 0, 0]) }] },
          { binaryOutputDefault: true },
        );
        res.writeHead(200, encoded.headers);
        res.write(encoded.body.subarray(0, 5));
        res.end(encoded.body.subarray(5));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends binary inputs with the given headers, and decodes a chunked binary answer', async () => {
    const client = createHttpInferClient('127.0.0.1', port, 1, { headers: { authorization: 'Bearer k' } });
    try {
      const result = await client.infer({ ...identity('w1', 7), modelName: 'a b' });
      expect(result.response).toMatchObject({ id: 'answer-1', modelName: 'm', modelVersion: '3' });
      expect(Array.from(new Int32Array(new Uint8Array(result.response.outputs[0]!.data).buffer))).toEqual([1, 2]);
      const request = seen.at(-1)!;
      expect(request.url).toBe('/v2/models/a%20b/infer');
      expect(request.headers).toMatchObject({ authorization: 'Bearer k', 'content-type': 'application/octet-stream', host: `127.0.0.1:${port}` });
      const jsonLength = Number(request.headers['inference-header-content-length']);
      expect(JSON.parse(request.body.subarray(0, jsonLength).toString())).toEqual({
        id: 'w1',
        parameters: { binary_data_output: true },
        inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', parameters: { binary_data_size: 4 } }],
      });
      expect(request.body.subarray(jsonLength)).toEqual(Buffer.from(fp32(7)));
    } finally {
      await client.close();
    }
  });

  it('encodes a request object once however often it is sent', async () => {
    const client = createHttpInferClient('127.0.0.1', port, 1);
    const base = identity('same', 1, 2);
    let inputReads = 0;
    const request: InferRequest = {
      ...base,
      get inputs() {
        inputReads += 1;
        return base.inputs;
      },
    };
    try {
      const first = seen.length;
      await client.infer(request);
      const reads = inputReads;
      const second = await client.infer(request);
      expect(inputReads).toBe(reads);
      expect(second.response.id).toBe(`answer-${seen.length}`);
      expect(seen[first + 1]!.body).toEqual(seen[first]!.body);
      // Another object with the same content is encoded afresh.
      await client.infer({ ...base });
      expect(seen.at(-1)!.body).toEqual(seen[first]!.body);
    } finally {
      await client.close();
    }
  });
});
