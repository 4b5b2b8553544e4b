/**
 * Issue 14, node side: decompression amplification. A 512 MiB gzip bomb (about 0.5 MB on the wire)
 * sent to a real `tessera-node` process, over HTTP (Content-Encoding: gzip) and gRPC (grpc-encoding:
 * gzip), must be refused as soon as inflation passes the limit (HTTP 413 naming --http-max-input-size,
 * before any model lookup; gRPC RESOURCE_EXHAUSTED at the receive limit), leaving the process's RSS
 * less than 100 MB above where it was. The bomb is built here by streaming zeros through zlib.
 * Also kept as cheap regressions: malformed JSON and absurd shapes are plain 400s.
 */
import { connect } from 'node:http2';
import { createGzip, constants as zlib } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawCall, securityWorkspace, startNodeProcess, type NodeProcess, type Workspace } from './support/node-process.js';

const BOMB_BYTES = 512 * 1024 * 1024;
const MAX_RSS_GROWTH = 100 * 1024 * 1024;

let workspace: Workspace;
let node: NodeProcess;
let bomb: Buffer;

/** 512 MiB of zeros through gzip, streamed (never 512 MiB in memory here either). */
async function gzipBomb(bytes: number): Promise<Buffer> {
  const gzip = createGzip({ level: zlib.Z_BEST_COMPRESSION });
  const out: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    gzip.on('end', resolve);
    gzip.on('error', reject);
  });
  const zeros = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < bytes; written += zeros.length) {
    if (!gzip.write(zeros)) await new Promise((resolve) => gzip.once('drain', resolve));
  }
  gzip.end();
  await done;
  return Buffer.concat(out);
}

beforeAll(async () => {
  workspace = await securityWorkspace('tessera-sec-bomb-');
  [node, bomb] = await Promise.all([startNodeProcess(workspace.repo), gzipBomb(BOMB_BYTES)]);
}, 120_000);

afterAll(async () => {
  await node?.stop();
  await workspace?.remove();
});

/** RSS after a short settle, so freed inflation buffers have had the chance to go back. */
async function settledRss(): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 300));
  return node.memory('VmRSS');
}

describe('gzip bomb over HTTP', () => {
  it('is about half a megabyte that inflates to 512 MiB', () => {
    expect(bomb.length).toBeLessThan(1024 * 1024);
  });

  it('is refused with 413 naming --http-max-input-size, before the model lookup, and RSS grows < 100 MB', async () => {
    const before = await node.memory('VmRSS');
    const growth: number[] = [];
    for (const path of ['/v2/models/no_such_model/infer', '/v2/models/good/infer', '/v2/repository/models/good/load', '/v2/models/good/versions/1/infer']) {
      const res = await rawCall(node.http, 'POST', path, { body: bomb, headers: { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' } });
      expect(res.status, path).toBe(413);
      // Not the 404 of an unknown model: the body is refused first.
      expect((JSON.parse(res.text) as { error: string }).error).toBe(
        'decompressed request body exceeds the maximum allowed value of 67108864 bytes. Use --http-max-input-size to increase the limit.',
      );
      growth.push((await settledRss()) - before);
    }
    if (process.env.SHOW_RSS) console.log(`RSS ${before} + ${growth.join(', ')}, peak ${await node.memory('VmHWM')}`);
    // One bomb costs at most what inflating up to the 64 MiB limit holds; more bombs do not add up (each
    // would add 64 MiB if the buffers were kept), though a busy box may not have given the last one back yet.
    expect(growth[0], `RSS growth after one bomb`).toBeLessThan(MAX_RSS_GROWTH);
    expect(Math.max(...growth), `RSS growth over four bombs: ${growth.join(', ')}`).toBeLessThan(MAX_RSS_GROWTH + 64 * 1024 * 1024);
    // Still serving.
    expect((await rawCall(node.http, 'GET', '/v2/health/ready')).status).toBe(200);
  }, 60_000);
});

describe('gzip bomb over gRPC', () => {
  it('is refused RESOURCE_EXHAUSTED at the receive limit, and RSS grows < 100 MB', async () => {
    const before = await node.memory('VmRSS');
    const session = connect(`http://${node.grpcTarget}`);
    session.on('error', () => undefined);
    try {
      for (const method of ['ModelInfer', 'RepositoryModelLoad']) {
        const framed = Buffer.alloc(5 + bomb.length);
        framed[0] = 1; // compressed
        framed.writeUInt32BE(bomb.length, 1);
        bomb.copy(framed, 5);
        const trailers = await new Promise<Record<string, unknown>>((resolve, reject) => {
          const stream = session.request({
            ':method': 'POST',
            ':path': `/inference.GRPCInferenceService/${method}`,
            'content-type': 'application/grpc',
            'grpc-encoding': 'gzip',
            te: 'trailers',
          });
          let headers: Record<string, unknown> = {};
          stream.on('response', (h) => (headers = h));
          stream.on('trailers', (t) => resolve({ ...headers, ...t }));
          stream.on('end', () => resolve(headers));
          stream.on('error', reject);
          stream.resume();
          stream.end(framed);
        });
        expect(trailers['grpc-status'], method).toBe('8'); // RESOURCE_EXHAUSTED
        expect(decodeURIComponent(String(trailers['grpc-message']))).toMatch(/decompresses to a size larger than 67108864/);
      }
    } finally {
      session.close();
    }
    const after = await settledRss();
    if (process.env.SHOW_RSS) console.log(`RSS ${before} -> ${after}, peak ${await node.memory("VmHWM")}`);
    expect(after - before, `RSS ${before} → ${after}`).toBeLessThan(MAX_RSS_GROWTH);
  }, 60_000);
});

describe('regressions (attacks that already held)', () => {
  it('answers malformed JSON and absurd shapes with 400, without allocating for them', async () => {
    const before = await node.memory('VmRSS');
    const cases: [string, RegExp][] = [
      ['{"inputs": [', /failed to parse/i],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [1e12, 1e12], "data": [1]}]}', /./],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [4294967296, 4294967296], "data": [1, 2]}]}', /./],
      ['{"inputs": [{"name": "INPUT0", "datatype": "FP32", "shape": [-1], "data": [1]}]}', /./],
    ];
    for (const [body, message] of cases) {
      const res = await rawCall(node.http, 'POST', '/v2/models/good/infer', { body });
      expect(res.status, body).toBe(400);
      expect((JSON.parse(res.text) as { error: string }).error).toMatch(message);
    }
    expect((await settledRss()) - before).toBeLessThan(MAX_RSS_GROWTH);
  });
});
