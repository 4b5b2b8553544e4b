import { request } from 'node:http';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, startTestServer, type TestServer } from '../../../test/support/test-server.js';

const MAX_INPUT = 1024;
const MAX_BODY = 64 * 1024;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ maxInputSize: MAX_INPUT, maxBodySize: MAX_BODY });
});
afterAll(() => t.close());

const errorOf = (body: Buffer): string => (JSON.parse(body.toString()) as { error: string }).error;

describe('body limits', () => {
  it('refuses infer JSON over --http-max-input-size with 400 naming the flag', async () => {
    const data = Array.from({ length: 400 }, () => 1.5);
    const body = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [100, 4], data }] }));
    expect(body.length).toBeGreaterThan(MAX_INPUT);
    const res = await rawRequest(`${t.url}/v2/models/identity/infer`, { body });
    expect(res.status).toBe(400);
    expect(errorOf(res.body)).toMatch(/Request JSON size of \d+ bytes exceeds .* 1024 bytes.*--http-max-input-size/);
  });

  it('accepts binary data beyond the JSON limit, up to the body limit', async () => {
    const tensor = Buffer.alloc(16 * 256);
    const header = Buffer.from(
      JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [256, 4], parameters: { binary_data_size: tensor.length } }] }),
    );
    const res = await rawRequest(`${t.url}/v2/models/identity/infer`, {
      headers: { 'Inference-Header-Content-Length': String(header.length) },
      body: Buffer.concat([header, tensor]),
    });
    expect(res.status).toBe(200);
  });

  it('refuses a declared Content-Length over the body limit with 400 naming the limit (and no flag that does not exist)', async () => {
    const res = await rawRequest(`${t.url}/v2/models/identity/infer`, { body: Buffer.alloc(MAX_BODY + 1) });
    expect(res.status).toBe(400);
    expect(errorOf(res.body)).toMatch(/65536 bytes\. This is the largest request body this node accepts/);
    expect(errorOf(res.body)).not.toMatch(/--http-max-body-size/);
  });

  it('stops reading an endless chunked body and answers 400', async () => {
    const chunk = Buffer.alloc(16 * 1024, 0x20);
    const result = await new Promise<{ status: number; sent: number }>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const req = request(`${t.url}/v2/models/identity/infer`, { method: 'POST' }, (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 0, sent });
        });
      });
      req.on('error', (error) => (answered ? undefined : reject(error)));
      const pump = (): void => {
        // Keep sending until the server answers (it must, long before 64 MiB).
        while (!answered && sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) {
            req.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
    expect(result.status).toBe(400);
    expect(result.sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('bounds decompression by --http-max-input-size (a small gzip that inflates past it is a 413)', async () => {
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(MAX_BODY);
    for (const path of ['/v2/models/identity/infer', '/v2/models/no_such_model/infer', '/v2/repository/models/m/load']) {
      const res = await rawRequest(`${t.url}${path}`, { headers: { 'Content-Encoding': 'gzip' }, body: bomb });
      expect(res.status, path).toBe(413);
      expect(errorOf(res.body)).toMatch(/decompressed request body exceeds .* 1024 bytes\. Use --http-max-input-size/);
    }
  });

  it('inflates a deflate body (zlib-wrapped or raw) within the limit', async () => {
    const body = Buffer.from(JSON.stringify({ log_info: true }));
    for (const encoded of [deflateSync(body), deflateRawSync(body)]) {
      const res = await rawRequest(`${t.url}/v2/logging`, { headers: { 'Content-Encoding': 'deflate' }, body: encoded });
      expect(res.status).toBe(200);
    }
    const corrupt = await rawRequest(`${t.url}/v2/logging`, { headers: { 'Content-Encoding': 'gzip' }, body: Buffer.from('not gzip') });
    expect(corrupt.status).toBe(400);
    expect(errorOf(corrupt.body)).toMatch(/failed to decompress/);
  });

  it('bounds control bodies by the input limit and load bodies by the body limit', async () => {
    const big = Buffer.from(JSON.stringify({ log_info: true, pad: 'x'.repeat(MAX_INPUT) }));
    const logging = await rawRequest(`${t.url}/v2/logging`, { body: big });
    expect(logging.status).toBe(400);
    expect(errorOf(logging.body)).toMatch(/--http-max-input-size/);
    const file = Buffer.alloc(8 * 1024).toString('base64');
    const load = await rawRequest(`${t.url}/v2/repository/models/m/load`, {
      body: Buffer.from(JSON.stringify({ parameters: { config: '{}', 'file:1/model.onnx': file } })),
    });
    expect(load.status).toBe(200);
  });

  it('logs none of these as server errors', () => {
    expect(t.errors).toEqual([]);
  });
});
