/**
 * Issue 17, lead 3: an HTTP binary answer is framed from the node's ModelInferResponse, its binary
 * sections views of the received message, and the outputs of an answer the h2 transport checked on
 * decode are not walked a second time (core/app/encoded-on-read.ts). A node is a stranger too: an
 * answer whose raw contents are cut short, whose shape does not match its bytes, that carries more raw
 * contents than outputs, or whose BYTES elements run past their tensor must give the client a clean
 * error naming the problem, never a 200 with a wrong body, and must not be stored by the cache.
 *
 * The gateway is the real one (startGateway, embedded mode). The node is a real node:http2 server on
 * loopback that answers ModelInfer with the bytes each case sets, framed as gRPC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeInferRequestBody, INFER_HEADER_LENGTH } from '../../shared/src/kserve/index.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { answerOf, int32, startScriptedGrpcNode, type ScriptedGrpcNode } from '../../gateway/test/support/scripted-grpc-node.js';

const KEY = 'tsk_hostile-node-answer';

describe('a hostile node answer to an HTTP binary request (gateway + an HTTP/2 node that answers what it is told)', () => {
  let node: ScriptedGrpcNode | undefined;
  let gateway: RunningGateway;
  let answer: Uint8Array = new Uint8Array(0);

  beforeAll(async () => {
    node = await startScriptedGrpcNode(() => answer);
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: { standard: { queueTimeoutMs: 20_000 } },
        tenants: [{ id: 'th', tier: 'standard', keys: [{ id: 'th1', hash: await sha256Hex(KEY) }] }],
        cache: { enabled: true, models: { simple: { enabled: true } } },
      }),
    );
    // One server under many node ids: the broken answers spread over as many breakers, none of which
    // sees enough of them to open (a breaker that opens would answer 'no node is ready' instead).
    const nodes = Array.from({ length: 16 }, (_, i) => ({ id: `hostile-${i}`, grpc: node!.address, http: null }));
    gateway = await startGateway({ config, redisUrl: null, nodes, port: 0, host: '127.0.0.1', logger: silentLogger });
  }, 30_000);

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await node?.close();
  });

  const post = async (id: string, noStore: boolean) => {
    const encoded = encodeInferRequestBody(
      { id, modelName: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Uint8Array(64) }, { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Uint8Array(64) }], parameters: {} },
      { binaryInputs: true, binaryDataOutput: true },
    );
    const response = await fetch(`${gateway.url}/v2/models/simple/infer`, {
      method: 'POST',
      headers: { ...encoded.headers, authorization: `Bearer ${KEY}`, ...(noStore ? { 'cache-control': 'no-store' } : {}) },
      body: encoded.body,
    });
    return { status: response.status, cache: response.headers.get('x-cache'), headerLength: response.headers.get(INFER_HEADER_LENGTH), body: new Uint8Array(await response.arrayBuffer()) };
  };

  it('answers a clean error naming the problem for each broken answer, stores none, and serves a good one exactly', async () => {
    const good = new Uint8Array(64).map((_, i) => i);
    answer = answerOf([int32('OUTPUT0', [1n, 16n])], [good]);
    // The first answer of a static fleet teaches the cache the version; a no-store one is framed with the id.
    const first = await post('warm', true);
    expect(first.status).toBe(200);

    const cases: [string, Uint8Array, RegExp][] = [
      ['raw contents cut short', answerOf([int32('OUTPUT0', [1n, 16n])], [good.subarray(0, 60)]), /byte size 60 .*expecting 64/],
      ['a shape larger than its bytes', answerOf([int32('OUTPUT0', [2n, 16n])], [good]), /byte size 64 .*expecting 128/],
      ['a shape smaller than its bytes', answerOf([int32('OUTPUT0', [1n, 8n])], [good]), /byte size 64 .*expecting 32/],
      ['more raw contents than outputs', answerOf([int32('OUTPUT0', [1n, 16n])], [good, good]), /expected 1 raw_output_contents entries, got 2/],
      ['fewer raw contents than outputs', answerOf([int32('OUTPUT0', [1n, 16n]), int32('OUTPUT1', [1n, 16n])], [good]), /expected 2 raw_output_contents entries, got 1/],
      ['a BYTES element running past its tensor', answerOf([{ name: 'OUTPUT0', datatype: 'BYTES', shape: [1n] }], [Uint8Array.of(9, 0, 0, 0, 0x61)]), /truncated: element 0 declares 9 bytes/],
      ['BYTES with fewer elements than its shape', answerOf([{ name: 'OUTPUT0', datatype: 'BYTES', shape: [2n] }], [Uint8Array.of(1, 0, 0, 0, 0x61)]), /BYTES elements/],
      ['an unknown datatype', answerOf([{ name: 'OUTPUT0', datatype: 'FP8', shape: [1n] }], [Uint8Array.of(1)]), /datatype/],
      ['a message cut inside a raw content', answerOf([int32('OUTPUT0', [1n, 16n])], [good]).subarray(0, 40), /./],
    ];
    const goodOne = answerOf([int32('OUTPUT0', [1n, 16n])], [good]);
    for (const [index, [what, bytes, message]] of cases.entries()) {
      // No-store misses (framed with the id or without), and the first case by the cache's store path too.
      const variants: (readonly [string, boolean])[] = index === 0 ? [['', true], ['req-7', true], ['req-8', false]] : [['', true], ['req-7', true]];
      for (const [id, noStore] of variants) {
        answer = bytes;
        const got = await post(id, noStore);
        expect(got.status, what).toBeGreaterThanOrEqual(500);
        expect(got.headerLength, what).toBeNull();
        const error = (JSON.parse(new TextDecoder().decode(got.body)) as { error: string }).error;
        expect(error, what).toMatch(message);
        answer = goodOne;
        expect((await post('between', true)).status, what).toBe(200);
      }
    }

    // A good answer afterwards: exactly the node's bytes with the client's id, and nothing broken was stored.
    answer = goodOne;
    for (const [id, noStore, cache] of [['after', true, 'BYPASS'], ['after', false, 'MISS'], ['again', false, 'HIT']] as const) {
      const got = await post(id, noStore);
      expect(got.status).toBe(200);
      expect(got.cache).toBe(cache);
      const header = `{"id":"${id}","model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}`;
      expect(got.headerLength).toBe(String(header.length));
      expect(Buffer.from(got.body).toString('hex')).toBe(Buffer.concat([Buffer.from(header), good]).toString('hex'));
    }
  }, 60_000);
});
