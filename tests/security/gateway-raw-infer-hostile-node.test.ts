/**
 * Issue 17, the raw infer upstream (gateway/src/adapters/node-http/raw-infer-upstream.ts): an HTTP
 * client's miss goes to the node as raw HTTP/1.1 and the node's answer is read strictly. A node is a
 * stranger: a bad status line, a header that would split the head, an oversized or doubly framed
 * answer, a body longer or shorter than it declared, a connection closed mid-body must each give the
 * client a clean error (never a 200 with a wrong body), store nothing in the cache, and leave the
 * next request on that node its own answer (bytes glued after an answer never reach it).
 *
 * The gateway is the real one (startGateway, embedded mode). The node is a real `net` server on
 * loopback that reads each request whole (its head and Content-Length body) and answers with the bytes
 * each case sets; it also records what it read, so the test checks the request the gateway sent.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeInferRequestBody, INFER_HEADER_LENGTH } from '../../shared/src/kserve/index.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';

const KEY = 'tsk_raw-infer-hostile-node';
const GOOD = new Uint8Array(64).map((_, i) => i);
const INPUT0 = new Uint8Array(64).map((_, i) => 255 - i);

/** A KServe binary answer with one INT32 [1,16] output whose bytes are `bytes`. */
function answerWith(bytes: Uint8Array, extraHead = ''): Buffer {
  const json = '{"model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}';
  const body = Buffer.concat([Buffer.from(json), bytes]);
  return Buffer.concat([
    Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ninference-header-content-length: ${json.length}\r\ncontent-length: ${body.length}\r\ntessera-queue-depth: 0\r\ntessera-inflight: 0\r\n${extraHead}\r\n`),
    body,
  ]);
}

interface ReadRequest {
  readonly head: string;
  readonly body: Buffer;
}

describe('a hostile node behind the raw infer upstream (gateway + a loopback TCP node that answers what it is told)', () => {
  let node: Server;
  const sockets = new Set<Socket>();
  let gateway: RunningGateway;
  /** How the node answers the next request: bytes to write, and whether to close the connection after them. */
  let answer: { bytes: Buffer; close?: boolean } = { bytes: answerWith(GOOD) };
  const requests: ReadRequest[] = [];

  beforeAll(async () => {
    node = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      let held = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        held = Buffer.concat([held, chunk]);
        for (;;) {
          const end = held.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = held.subarray(0, end).toString('latin1');
          const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (held.length < end + 4 + length) return;
          requests.push({ head, body: held.subarray(end + 4, end + 4 + length) });
          held = held.subarray(end + 4 + length);
          const { bytes, close } = answer;
          if (close === true) socket.end(bytes);
          else socket.write(bytes);
        }
      });
    });
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const port = (node.address() as AddressInfo).port;
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: { standard: { queueTimeoutMs: 20_000 } },
        tenants: [{ id: 'tr', tier: 'standard', keys: [{ id: 'tr1', hash: await sha256Hex(KEY) }] }],
        cache: { enabled: true, models: { simple: { enabled: true } } },
        nodeRawInferBelowCalls: 4,
      }),
    );
    // One server under many node ids: the broken answers spread over as many breakers, none of which opens.
    const nodes = Array.from({ length: 16 }, (_, i) => ({ id: `raw-hostile-${i}`, grpc: `127.0.0.1:${port}`, http: `127.0.0.1:${port}` }));
    gateway = await startGateway({ config, redisUrl: null, nodes, port: 0, host: '127.0.0.1', logger: silentLogger });
  }, 30_000);

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (node === undefined ? resolve() : node.close(() => resolve())));
  });

  const post = async (id: string, noStore: boolean) => {
    const encoded = encodeInferRequestBody(
      { id, modelName: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: INPUT0 }, { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Uint8Array(64) }], parameters: {} },
      { binaryInputs: true, binaryDataOutput: true },
    );
    const response = await fetch(`${gateway.url}/v2/models/simple/infer`, {
      method: 'POST',
      headers: { ...encoded.headers, authorization: `Bearer ${KEY}`, ...(noStore ? { 'cache-control': 'no-store' } : {}) },
      body: encoded.body,
    });
    return { status: response.status, cache: response.headers.get('x-cache'), headerLength: response.headers.get(INFER_HEADER_LENGTH), body: new Uint8Array(await response.arrayBuffer()) };
  };

  const expectGood = async (id: string, noStore: boolean, cache: string) => {
    const got = await post(id, noStore);
    expect(got.status).toBe(200);
    expect(got.cache).toBe(cache);
    const header = `{${id === '' ? '' : `"id":"${id}",`}"model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}`;
    expect(Buffer.from(got.body).toString('hex')).toBe(Buffer.concat([Buffer.from(header), GOOD]).toString('hex'));
  };

  it('sends the request as the node reads it: binary sections the client\'s bytes, outputs asked binary, priority, timeout and deadline', async () => {
    answer = { bytes: answerWith(GOOD) };
    requests.length = 0;
    await expectGood('first', true, 'BYPASS');
    expect(requests).toHaveLength(1);
    const { head, body } = requests[0]!;
    expect(head).toMatch(/^POST \/v2\/models\/simple\/infer HTTP\/1\.1\r\n/);
    expect(head).toMatch(/\r\nx-tessera-deadline-ms: \d+/);
    const jsonLength = Number(/\r\ninference-header-content-length: (\d+)/.exec(head)![1]);
    const json = JSON.parse(body.subarray(0, jsonLength).toString()) as { parameters: Record<string, unknown>; inputs: unknown[] };
    expect(json.parameters).toMatchObject({ binary_data_output: true, priority: expect.any(Number), timeout: expect.any(Number) });
    expect(body.length).toBe(jsonLength + 128);
    expect(Buffer.from(body.subarray(jsonLength, jsonLength + 64)).equals(Buffer.from(INPUT0))).toBe(true);
  });

  it('answers a clean error for each broken answer, stores none, and the next request gets its own answer', async () => {
    const body = answerWith(GOOD);
    const bodyStart = body.indexOf('\r\n\r\n') + 4;
    const cases: [string, { bytes: Buffer; close?: boolean }][] = [
      ['a bad status line', { bytes: Buffer.concat([Buffer.from('HTTP/1.1 2000 OK'), body.subarray(body.indexOf('\r\n'))]) }],
      ['a header value with a bare LF (a split head)', { bytes: answerWith(GOOD, 'x-evil: a\nHTTP/1.1 200 OK\r\n') }],
      ['a header line without a colon', { bytes: answerWith(GOOD, 'no colon here\r\n') }],
      ['an oversized Content-Length', { bytes: Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 999999999999999\r\n\r\n{"x":'), close: true }],
      ['Content-Length and Transfer-Encoding both', { bytes: answerWith(GOOD, 'transfer-encoding: chunked\r\n') }],
      ['a body shorter than declared, then the connection closed', { bytes: body.subarray(0, body.length - 10), close: true }],
      ['a connection closed mid-body', { bytes: body.subarray(0, bodyStart + 20), close: true }],
      ['a head that never ends, over the bound', { bytes: Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\n'), Buffer.alloc(20_000, 'x-a: b\r\n')]), close: true }],
      ['a 200 whose body is not an inference answer', { bytes: Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\nnot it!') }],
    ];
    for (const [what, bad] of cases) {
      for (const [id, noStore] of [['', true], ['stored', false]] as const) {
        answer = bad;
        const got = await post(id, noStore);
        expect(got.status, what).toBeGreaterThanOrEqual(500);
        expect(got.headerLength, what).toBeNull();
        expect((JSON.parse(new TextDecoder().decode(got.body)) as { error: string }).error, what).toMatch(/node 'raw-hostile-\d+'/);
        answer = { bytes: answerWith(GOOD) };
        await expectGood('between', true, 'BYPASS');
      }
    }
    // Nothing broken was stored: the first stored request is a miss, then a hit of the good answer.
    await expectGood('after', false, 'MISS');
    await expectGood('again', false, 'HIT');
  }, 60_000);

  it('never hands bytes glued after an answer (a second, unasked answer) to the next request', async () => {
    const evil = new Uint8Array(64).fill(0xee);
    // A body longer than declared: the declared part is a good answer, the rest looks like another one.
    answer = { bytes: Buffer.concat([answerWith(GOOD), answerWith(evil)]) };
    await expectGood('glued', true, 'BYPASS');
    answer = { bytes: answerWith(GOOD) };
    for (let i = 0; i < 8; i++) await expectGood(`next-${i}`, true, 'BYPASS');
  });
});
