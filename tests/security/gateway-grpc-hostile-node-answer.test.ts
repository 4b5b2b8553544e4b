/**
 * Issue 17: a gRPC client's miss is answered with the node's ModelInferResponse as received (its id
 * put in), read and checked in one pass by the gateway (gateway/src/adapters/grpc/infer-response-reader.ts).
 * A node is a stranger: an answer whose raw contents are cut short, whose shape does not match its
 * bytes, with more or fewer raw contents than outputs, a BYTES element running past its tensor, an
 * unknown datatype or a message cut inside a field must reach a real gRPC client (grpc-js with our
 * protos) as a clean status naming the problem, never as an OK with the broken message, and must not
 * be stored by the cache. Answers that are odd but valid (an unknown field, parameters, typed contents
 * instead of raw ones) reach the client whole: a miss gets the node's bytes with the client's id.
 *
 * The gateway is the real one (startGateway, embedded mode, its gRPC front door). The node is a real
 * node:http2 server on loopback that answers ModelInfer with the bytes each case sets, framed as gRPC.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelInferResponseSchema, type ModelInferResponse } from '../../shared/src/gen/grpc_service_pb.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { frontClient, simpleProto, type FrontClient } from '../../gateway/test/grpc-front/front-client.js';
import { answerOf, int32, startScriptedGrpcNode, type ScriptedGrpcNode } from '../../gateway/test/support/scripted-grpc-node.js';

const KEY = 'tsk_grpc-hostile-node-answer';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('a hostile node answer to a gRPC client (gateway gRPC front door + an HTTP/2 node that answers what it is told)', () => {
  let node: ScriptedGrpcNode | undefined;
  let gateway: RunningGateway;
  let client: FrontClient;
  let answer: Uint8Array = new Uint8Array(0);

  beforeAll(async () => {
    node = await startScriptedGrpcNode(() => answer);
    const config = loadGatewayConfig(
      JSON.stringify({
        tiers: { standard: { queueTimeoutMs: 20_000 } },
        tenants: [{ id: 'tg', tier: 'standard', keys: [{ id: 'tg1', hash: await sha256Hex(KEY) }] }],
        cache: { enabled: true, models: { simple: { enabled: true } } },
      }),
    );
    // One server under many node ids: the broken answers spread over as many breakers, none of which opens.
    const nodes = Array.from({ length: 16 }, (_, i) => ({ id: `hostile-grpc-${i}`, grpc: node!.address, http: null }));
    gateway = await startGateway({ config, redisUrl: null, nodes, port: 0, grpcPort: 0, host: '127.0.0.1', logger: silentLogger });
    client = frontClient(gateway.grpcTarget!);
  }, 30_000);

  afterAll(async () => {
    client?.close();
    await gateway?.close({ graceMs: 500 });
    await node?.close();
  });

  /** One ModelInfer of `simple` with request id `id` (inputs differ per `offset`: their own cache entry). */
  const infer = (id: string, noStore: boolean, offset = 0) =>
    client.unary<ModelInferResponse>('modelInfer', simpleProto(offset, id), { key: KEY, metadata: noStore ? { 'cache-control': 'no-store' } : {} });
  const cacheOf = (result: Awaited<ReturnType<typeof infer>>): unknown => result.trailer.get('x-cache')[0];

  it('answers each broken node answer with a clean status naming the problem, stores none, and serves good ones whole', async () => {
    const good = new Uint8Array(64).map((_, i) => i);
    const goodOne = answerOf([int32('OUTPUT0', [1n, 16n])], [good]);
    answer = goodOne;
    // The first answer of a static fleet teaches the cache the version.
    expect((await infer('warm', true)).error).toBeUndefined();

    const cases: [string, Uint8Array, RegExp][] = [
      ['raw contents cut short', answerOf([int32('OUTPUT0', [1n, 16n])], [good.subarray(0, 60)]), /byte size 60 .*expecting 64/],
      ['a shape larger than its bytes', answerOf([int32('OUTPUT0', [2n, 16n])], [good]), /byte size 64 .*expecting 128/],
      ['a shape smaller than its bytes', answerOf([int32('OUTPUT0', [1n, 8n])], [good]), /byte size 64 .*expecting 32/],
      ['more raw contents than outputs', answerOf([int32('OUTPUT0', [1n, 16n])], [good, good]), /expected 1 raw_output_contents entries, got 2/],
      ['fewer raw contents than outputs', answerOf([int32('OUTPUT0', [1n, 16n]), int32('OUTPUT1', [1n, 16n])], [good]), /expected 2 raw_output_contents entries, got 1/],
      ['a BYTES element running past its tensor', answerOf([{ name: 'OUTPUT0', datatype: 'BYTES', shape: [1n] }], [Uint8Array.of(9, 0, 0, 0, 0x61)]), /truncated: element 0 declares 9 bytes/],
      ['BYTES with fewer elements than its shape', answerOf([{ name: 'OUTPUT0', datatype: 'BYTES', shape: [2n] }], [Uint8Array.of(1, 0, 0, 0, 0x61)]), /BYTES elements/],
      ['an unknown datatype', answerOf([{ name: 'OUTPUT0', datatype: 'FP8', shape: [1n] }], [Uint8Array.of(1)]), /datatype/],
      ['a negative dimension', answerOf([int32('OUTPUT0', [-1n])], [good.subarray(0, 4)]), /dimension|non-negative/],
      ['a message cut inside a raw content', goodOne.subarray(0, 40), /malformed/],
      ['a field with an invalid wire type', Uint8Array.of(...goodOne, 0x0f), /malformed|wire type/],
    ];
    for (const [what, bytes, message] of cases) {
      for (const [id, noStore] of [['', true], ['req-7', true], ['req-8', false]] as const) {
        answer = bytes;
        const got = await infer(id, noStore);
        expect(got.response, what).toBeUndefined();
        // The node's fault: the gateway's 502 as gRPC (UNAVAILABLE), or INTERNAL; never OK.
        expect([status.UNAVAILABLE, status.INTERNAL], what).toContain(got.error?.code);
        expect(got.error?.details, what).toMatch(message);
        answer = goodOne;
        expect((await infer('between', true)).error, what).toBeUndefined();
      }
    }

    // Odd but valid answers reach the client whole: the node's bytes as sent, with the client's id where an encoder puts it.
    const unknownField = Uint8Array.of(...goodOne, 0xf8, 0x07, 0x01); // field 127, varint 1: unknown to the proto
    const withParameters = toBinary(
      ModelInferResponseSchema,
      create(ModelInferResponseSchema, { modelName: 'simple', modelVersion: '1', parameters: { sequence_end: { parameterChoice: { case: 'boolParam', value: true } } }, outputs: [int32('OUTPUT0', [1n, 16n])], rawOutputContents: [good] }),
    );
    const typedContents = toBinary(
      ModelInferResponseSchema,
      create(ModelInferResponseSchema, { modelName: 'simple', modelVersion: '1', outputs: [{ name: 'OUTPUT0', datatype: 'INT32', shape: [1n, 2n], contents: { intContents: [7, -3] } }] }),
    );
    for (const [what, bytes] of [['an unknown field', unknownField], ['parameters', withParameters], ['typed contents', typedContents], ['a plain answer', goodOne]] as const) {
      answer = bytes;
      const got = await infer('odd-1', true);
      expect(got.error, what).toBeUndefined();
      expect(cacheOf(got), what).toBe('BYPASS');
      // The id goes in after the version (field 3, before the outputs), as protobuf-es would write it.
      const expected = fromBinary(ModelInferResponseSchema, bytes);
      expected.id = 'odd-1';
      expect(hex(toBinary(ModelInferResponseSchema, got.response!)), what).toBe(hex(toBinary(ModelInferResponseSchema, expected)));
      if (bytes === unknownField) expect(got.response!.$unknown?.length, what).toBe(1);
    }

    // Nothing broken was stored: a stored miss and its hit give the good answer, the hit the same bytes as the miss.
    answer = goodOne;
    const miss = await infer('after', false, 5);
    const hit = await infer('after', false, 5);
    expect([cacheOf(miss), cacheOf(hit)]).toEqual(['MISS', 'HIT']);
    expect(hex(miss.response!.rawOutputContents[0]!)).toBe(hex(good));
    expect(hex(toBinary(ModelInferResponseSchema, hit.response!))).toBe(hex(toBinary(ModelInferResponseSchema, miss.response!)));
  }, 90_000);
});
