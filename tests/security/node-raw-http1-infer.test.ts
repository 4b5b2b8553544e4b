/**
 * The node's infer route over the raw HTTP/1.1 reader (rawHttp1, issue 18) answers as the node:http path does:
 * the same request sent to a node with the switch and one without gets the same bytes back (Date aside), for good
 * requests (binary and JSON, compressed answers, a deadline) and refused ones (unknown model, bad header length,
 * a bad body), and a request the raw path does not take (a GET, a gzip body) on the same connection is served by
 * node:http as before. Real node core with an onnxruntime model, real servers on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { createNodeCore } from '../../gpu-node/src/server-api/node-core-impl.js';
import { createHttpServer } from '../../gpu-node/src/server/http/index.js';
import { exchange } from '../../shared/src/http/raw-http1/test-helpers.js';
import { writeDoublerRepository } from './support/doubler-repository.js';

const WIDTH = 4;
let dir: string;
let core: ReturnType<typeof createNodeCore>;
const servers: ReturnType<typeof createHttpServer>[] = [];
let nodeHttpPort: number;
let rawPort: number;

beforeAll(async () => {
  dir = await writeDoublerRepository('tessera-sec-raw-http1-', { width: WIDTH, maxBatchSize: 8 });
  core = createNodeCore({ repositoryPath: dir, controlMode: 'explicit', loadModels: ['doubler'] });
  await core.start();
  const plain = createHttpServer(core, { maxPipelinedRequests: 1 });
  const raw = createHttpServer(core, { maxPipelinedRequests: 1, rawHttp1: true });
  servers.push(plain, raw);
  nodeHttpPort = (await plain.listen(0, '127.0.0.1')).port;
  rawPort = (await raw.listen(0, '127.0.0.1')).port;
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close({ graceMs: 100 })));
  await core?.shutdown({ timeoutMs: 5000 });
  await rm(dir, { recursive: true, force: true });
});

const row = Buffer.from(new Float32Array([1, 2, 3, 4]).buffer);

function binaryInfer(path = '/v2/models/doubler/infer', extra = '', header?: string): string {
  const json = header ?? JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, WIDTH], parameters: { binary_data_size: 16 } }], outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }] });
  const body = json + row.toString('latin1');
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nInference-Header-Content-Length: ${json.length}\r\n${extra}Content-Length: ${body.length}\r\n\r\n${body}`;
}

function jsonInfer(json: string, extra = ''): string {
  return `POST /v2/models/doubler/infer HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${extra}Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
}

const cases: [string, string][] = [
  ['a binary infer', binaryInfer()],
  ['a binary infer naming the version', binaryInfer('/v2/models/doubler/versions/1/infer')],
  ['a JSON infer', jsonInfer(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, WIDTH], data: [1, 2, 3, 4] }] }))],
  ['a gzip answer', binaryInfer(undefined, 'Accept-Encoding: gzip\r\n')],
  ['a deadline', binaryInfer(undefined, 'X-Tessera-Deadline-Ms: 10000\r\n')],
  ['an unknown model', binaryInfer('/v2/models/nothing/infer')],
  ['a header length past the body', binaryInfer(undefined, '', '{"inputs":[]}').replace(/Inference-Header-Content-Length: \d+/, 'Inference-Header-Content-Length: 999')],
  ['a body that is not JSON', jsonInfer('{not json')],
  ['a wrong shape', jsonInfer(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }] }))],
];

describe('the infer route over the raw HTTP/1.1 reader', () => {
  it.each(cases)('answers %s as the node:http path does', async (_name, bytes) => {
    const [want, got] = await Promise.all([exchange(nodeHttpPort, [bytes]), exchange(rawPort, [bytes])]);
    expect(want.text).toMatch(/^HTTP\/1\.1 \d{3} /);
    expect(got.text).toBe(want.text);
    expect(got.closed).toBe(want.closed);
  });

  it('refuses a malformed deadline as the node:http path does, and keeps the connection since the body was read whole', async () => {
    const bytes = binaryInfer(undefined, 'X-Tessera-Deadline-Ms: soon\r\n');
    const [want, got] = await Promise.all([exchange(nodeHttpPort, [bytes]), exchange(rawPort, [bytes])]);
    const statusAndBody = (text: string): string => text.replace(/\r\n[\s\S]*\r\n\r\n/, ' | ');
    expect(statusAndBody(got.text)).toBe(statusAndBody(want.text));
    expect(got.text).toMatch(/^HTTP\/1\.1 400 [\s\S]*x-tessera-deadline-ms/);
    // node:http refuses before reading the body, so it must close; the raw path has the whole body already.
    expect(want.text).toContain('Connection: close');
    expect(got.text).toContain('Connection: keep-alive');
  });

  it('hands a GET and a gzip body on the same connection to node:http, which answers as before', async () => {
    const json = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, WIDTH], data: [1, 2, 3, 4] }] });
    const gz = gzipSync(json);
    const gzipped = `POST /v2/models/doubler/infer HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: ${gz.length}\r\n\r\n`;
    const parts = [binaryInfer(), 'GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\n'];
    const [want, got] = await Promise.all(
      [nodeHttpPort, rawPort].map(async (port) => {
        const a = await exchange(port, [parts[0]!], { answers: 1 });
        const b = await exchange(port, parts, { answers: 2, gapMs: 100 });
        const c = await exchange(port, [Buffer.concat([Buffer.from(gzipped, 'latin1'), gz])], { answers: 1 });
        return [a.text, b.text, c.text];
      }),
    );
    expect(got).toEqual(want);
    expect(got?.[2]).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(got?.[1]).toMatch(/HTTP\/1\.1 200 OK[\s\S]*HTTP\/1\.1 200 OK/);
  });

  it('serves pipelined infer requests one at a time, so the pipelining bound never refuses them', async () => {
    // With maxPipelinedRequests 1, node:http takes all three at once and refuses the second (503, then closes).
    const three = binaryInfer().repeat(3);
    const [nodeHttp, raw] = await Promise.all([exchange(nodeHttpPort, [three], { answers: 2 }), exchange(rawPort, [three], { answers: 3 })]);
    expect(nodeHttp.text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 503']);
    expect(raw.text.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 200']);
    expect(raw.closed).toBe(false);
  });
});
