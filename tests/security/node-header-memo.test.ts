/**
 * The node remembers the decoded JSON header of binary-extension requests by its exact text (issue 18,
 * shared/src/kserve/header-memo.ts), so one caller's header is reused for everyone who sends the same text.
 * A stranger must gain nothing from that: a remembered header with a body of the wrong size is refused
 * (400 naming the size) as without the memo, each caller's answer comes from its own bytes, and a flood
 * of distinct headers leaves the memo bounded. Real node HTTP server on loopback, real onnxruntime.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { createNodeCore } from '../../gpu-node/src/server-api/node-core-impl.js';
import { createHttpServer } from '../../gpu-node/src/server/http/index.js';
import { HEADER_MEMO_ENTRIES } from '../../shared/src/kserve/header-memo.js';
import { requestHeaderMemo } from '../../shared/src/kserve/index.js';
import { writeDoublerRepository } from './support/doubler-repository.js';

const WIDTH = 4;

let dir: string;
let core: ReturnType<typeof createNodeCore>;
let http: ReturnType<typeof createHttpServer>;
let base: string;

beforeAll(async () => {
  dir = await writeDoublerRepository('tessera-sec-memo-', { width: WIDTH, maxBatchSize: 8 });
  core = createNodeCore({ repositoryPath: dir, controlMode: 'explicit', loadModels: ['doubler'] });
  await core.start();
  http = createHttpServer(core, {});
  base = `http://127.0.0.1:${(await http.listen(0, '127.0.0.1')).port}`;
}, 60_000);

afterAll(async () => {
  await http?.close({ graceMs: 100 });
  await core?.shutdown({ timeoutMs: 5000 });
  await rm(dir, { recursive: true, force: true });
});

const header = (id: string, bytes = WIDTH * 4): string =>
  JSON.stringify({
    id,
    inputs: [{ name: 'INPUT0', shape: [1, WIDTH], datatype: 'FP32', parameters: { binary_data_size: bytes } }],
    outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
  });

async function infer(json: string, data: Uint8Array): Promise<{ status: number; text: string; output: number[] }> {
  const head = Buffer.from(json);
  const res = await fetch(`${base}/v2/models/doubler/infer`, {
    method: 'POST',
    headers: { 'Inference-Header-Content-Length': String(head.length), 'Content-Type': 'application/octet-stream' },
    body: Buffer.concat([head, data]),
  });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) return { status: res.status, text: body.toString(), output: [] };
  const jsonLength = Number(res.headers.get('inference-header-content-length'));
  const out = Uint8Array.from(body.subarray(jsonLength));
  return { status: 200, text: body.toString('utf8', 0, jsonLength), output: Array.from(new Float32Array(out.buffer, 0, WIDTH)) };
}

const row = (...values: number[]): Uint8Array => new Uint8Array(new Float32Array(values).buffer);

describe('a remembered request header', () => {
  it('is reused only with each caller\'s own bytes, and a body of the wrong size is still refused', async () => {
    const json = header('shared');
    expect((await infer(json, row(1, 2, 3, 4))).output).toEqual([2, 4, 6, 8]);
    const hits = requestHeaderMemo.hits;
    const short = await infer(json, row(1, 2, 3));
    expect(short.status).toBe(400);
    expect(short.text).toContain("unexpected size for input 'INPUT0', expecting 16 bytes but only 12 remain");
    const long = await infer(json, row(1, 2, 3, 4, 5));
    expect(long.status).toBe(400);
    expect(long.text).toContain('unexpected additional input data');
    expect((await infer(json, row(5, 6, 7, 8))).output).toEqual([10, 12, 14, 16]);
    expect(requestHeaderMemo.hits).toBe(hits + 3);
  });

  it('a flood of distinct headers leaves the memo bounded and every answer right', async () => {
    for (let i = 0; i < HEADER_MEMO_ENTRIES * 2; i++) {
      const answer = await infer(header(`stranger-${i}`), row(i, 1, 0, -1));
      expect(answer.output).toEqual([2 * i, 2, 0, -2]);
      expect(requestHeaderMemo.size).toBeLessThanOrEqual(HEADER_MEMO_ENTRIES);
    }
  });
});
