/**
 * Issue 17 item 3, as a property: for every datatype (BYTES with NUL and non-UTF-8 elements, FP16,
 * BF16 included), random rank-2 shapes and random contents, whichever protocol a request comes in by
 * (KServe HTTP with the binary extension, or gRPC) and whether the gateway answers from the node
 * (MISS) or from its cache (HIT), the bytes the client gets back are exactly the bytes the model
 * produced. The model is an echo (echo-repository.ts), so what it produced is what was sent. JSON
 * requests (INT32, finite FP32, UTF-8 BYTES) are encoded once on the way in and come back the same.
 * Real redis-server (the cache store), a real node process, the gateway in this process.
 */
import { create } from '@bufbuild/protobuf';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelInferRequestSchema, ModelInferRequest_InferInputTensorSchema, type ModelInferResponse } from '../../../shared/src/gen/grpc_service_pb.js';
import { decodeInferResponseBody, encodeInferRequestBody, INFER_HEADER_LENGTH } from '../../../shared/src/kserve/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { encodeBytesElements, type Datatype } from '../../../shared/src/tensors/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { frontClient, type FrontClient } from '../grpc-front/front-client.js';
import { spawnNode, type SpawnedNode } from '../support/test-node-process.js';
import { ECHO_DATATYPES, echoModel, writeEchoRepository, type EchoDatatype } from './echo-repository.js';
import { rm } from 'node:fs/promises';

const KEY = 'tsk_bytes-untouched';
const BYTE_SIZE: Readonly<Record<Exclude<EchoDatatype, 'BYTES'>, number>> = {
  BOOL: 1, UINT8: 1, UINT16: 2, UINT32: 4, UINT64: 8, INT8: 1, INT16: 2, INT32: 4, INT64: 8, FP16: 2, FP32: 4, FP64: 8, BF16: 2,
};

interface Case {
  readonly datatype: EchoDatatype;
  readonly shape: readonly [number, number];
  /** The tensor's raw bytes as the binary extension and raw_input_contents carry them. */
  readonly bytes: Uint8Array;
  /** The request id: the answer must carry it, whether the node's message is forwarded or re-encoded. */
  readonly id: string;
}

/** Random contents for `datatype`: any bit pattern (NaNs and subnormals of the floats too); BOOL is 0 or 1. */
function contents(datatype: EchoDatatype, elements: number): fc.Arbitrary<Uint8Array> {
  if (datatype === 'BYTES') {
    // Elements with NUL, 0xff and lone continuation bytes (not UTF-8), empty ones too.
    const element = fc.uint8Array({ minLength: 0, maxLength: 12 }).map((b) => (b.length > 2 ? Uint8Array.of(0, 0xff, 0x80, ...b) : b));
    return fc.array(element, { minLength: elements, maxLength: elements }).map((els) => encodeBytesElements(els));
  }
  if (datatype === 'BOOL') return fc.uint8Array({ min: 0, max: 1, minLength: elements, maxLength: elements });
  const n = elements * BYTE_SIZE[datatype];
  return fc.uint8Array({ minLength: n, maxLength: n });
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({ datatype: fc.constantFrom(...ECHO_DATATYPES), rows: fc.integer({ min: 1, max: 3 }), cols: fc.integer({ min: 1, max: 5 }) })
  .chain(({ datatype, rows, cols }) =>
    fc.tuple(contents(datatype, rows * cols), fc.oneof(fc.constant(''), fc.string({ unit: 'grapheme', maxLength: 10 }))).map(([bytes, id]) => ({ datatype, shape: [rows, cols] as const, bytes, id })),
  );

type Protocol = 'http' | 'grpc';

describe('tensor bytes through the gateway, untouched (redis + node + gateway)', () => {
  let redis: RedisServer;
  let node: SpawnedNode;
  let repository: string;
  let gateway: RunningGateway;
  let client: FrontClient;

  beforeAll(async () => {
    redis = await startRedisServer();
    repository = await writeEchoRepository();
    node = await spawnNode(repository, ['--redis-url', redis.url, '--node-id', 'bytes-node', '--advertise-host', '127.0.0.1']);
    const models = Object.fromEntries(ECHO_DATATYPES.map((d) => [echoModel(d), { enabled: true }]));
    const config = loadGatewayConfig(
      JSON.stringify({
        // Rate limits far above what the property sends: this test is about bytes, not quotas.
        tiers: { standard: { queueTimeoutMs: 20_000, rateLimits: { requestsPerSecond: 1_000_000, burst: 1_000_000, elementsPerSecond: 0, elementsBurst: 0, bytesPerSecond: 0, bytesBurst: 0 } } },
        tenants: [{ id: 'tb', tier: 'standard', keys: [{ id: 'tb1', hash: await sha256Hex(KEY) }] }],
        cache: { enabled: true, models },
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, grpcPort: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => ECHO_DATATYPES.every((d) => gateway.directory.candidates(echoModel(d)).length === 1), { what: 'the echo models in the fleet view', timeoutMs: 60_000 });
    client = frontClient(gateway.grpcTarget!);
  }, 90_000);

  afterAll(async () => {
    client?.close();
    await gateway?.close({ graceMs: 1000 });
    if (node !== undefined && node.process.exitCode === null) {
      node.process.kill('SIGTERM');
      await node.exited;
    }
    await redis?.stop();
    if (repository !== undefined) await rm(repository, { recursive: true, force: true });
  });

  /** One infer by `protocol`; resolves with the answer's OUTPUT0 and the gateway's x-cache. */
  async function infer(protocol: Protocol, c: Case, opts: { noStore?: boolean; deadlineMs?: number } = {}): Promise<{ datatype: string; shape: number[]; bytes: Uint8Array; cache: string | undefined; id: string; model: string }> {
    const model = echoModel(c.datatype);
    if (protocol === 'grpc') {
      const request = create(ModelInferRequestSchema, {
        modelName: model,
        id: c.id,
        inputs: [create(ModelInferRequest_InferInputTensorSchema, { name: 'INPUT0', datatype: c.datatype, shape: c.shape.map(BigInt) })],
        rawInputContents: [c.bytes],
      });
      const metadata: Record<string, string> = opts.noStore === true ? { 'cache-control': 'no-store' } : {};
      const result = await client.unary<ModelInferResponse>('modelInfer', request, { key: KEY, metadata, ...(opts.deadlineMs === undefined ? {} : { deadlineMs: opts.deadlineMs }) });
      if (result.error !== undefined) throw new Error(`gRPC ${result.error.code}: ${result.error.details}`);
      const out = result.response!;
      const cache = result.trailer.get('x-cache')[0] ?? result.initial.get('x-cache')[0];
      return {
        datatype: out.outputs[0]!.datatype,
        shape: out.outputs[0]!.shape.map(Number),
        bytes: out.rawOutputContents[0]!,
        cache: cache === undefined ? undefined : String(cache),
        id: out.id,
        model: out.modelName,
      };
    }
    const encoded = encodeInferRequestBody(
      { id: c.id, modelName: model, inputs: [{ name: 'INPUT0', datatype: c.datatype as Datatype, shape: [...c.shape], data: c.bytes }], parameters: {} },
      { binaryInputs: true, binaryDataOutput: true },
    );
    const response = await fetch(`${gateway.url}/v2/models/${model}/infer`, {
      method: 'POST',
      headers: { ...encoded.headers, authorization: `Bearer ${KEY}`, ...(opts.noStore === true ? { 'cache-control': 'no-store' } : {}) },
      body: encoded.body,
    });
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${new TextDecoder().decode(body)}`);
    const decoded = decodeInferResponseBody(body, response.headers.get(INFER_HEADER_LENGTH));
    const out = decoded.outputs[0]!;
    return { datatype: out.datatype, shape: [...out.shape], bytes: out.data, cache: response.headers.get('x-cache') ?? undefined, id: decoded.id, model: decoded.modelName };
  }

  const protocols = fc.constantFrom<Protocol>('http', 'grpc');

  /** A KServe JSON request (tensor values as JSON numbers or strings), answered with binary outputs. */
  async function inferJson(model: string, datatype: string, shape: readonly number[], data: readonly (number | string | boolean)[]) {
    const response = await fetch(`${gateway.url}/v2/models/${model}/infer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype, shape, data }], parameters: { binary_data_output: true } }),
    });
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${new TextDecoder().decode(body)}`);
    return { bytes: decodeInferResponseBody(body, response.headers.get(INFER_HEADER_LENGTH)).outputs[0]!.data, cache: response.headers.get('x-cache') };
  }

  it('gives back the bytes the model produced, every datatype, both protocols, miss and hit', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, protocols, protocols, async (c, first, second) => {
        const expected = { datatype: c.datatype, shape: [...c.shape], bytes: Buffer.from(c.bytes).toString('hex'), id: c.id, model: echoModel(c.datatype) };
        const seen = (a: Awaited<ReturnType<typeof infer>>) => ({ datatype: a.datatype, shape: a.shape, bytes: Buffer.from(a.bytes).toString('hex'), id: a.id, model: a.model });
        const produced = await infer(first, c);
        expect(seen(produced)).toEqual(expected);
        // The same request again by the same door is answered from the cache, with the same bytes.
        const again = await infer(first, c);
        expect(again.cache).toBe('HIT');
        expect(seen(again)).toEqual(expected);
        // And by the other door (or the same), from the cache or the node: still the same bytes.
        expect(seen(await infer(second, c))).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  }, 180_000);

  // A gRPC miss that is not stored is answered from the node's message and never encodes a KServe body
  // (core/app/encoded-on-read.ts): the bytes and the id must be the same as over HTTP, which reads one.
  it('gives back the same bytes on no-store misses, both protocols, the gRPC fast path and grpc-js alike', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, protocols, fc.boolean(), async (c, protocol, withDeadline) => {
        const expected = { datatype: c.datatype, shape: [...c.shape], bytes: Buffer.from(c.bytes).toString('hex'), id: c.id, model: echoModel(c.datatype), cache: 'BYPASS' };
        // With a deadline the call carries grpc-timeout and takes the h2 fast path; without, grpc-js's handler.
        const answer = await infer(protocol, c, { noStore: true, ...(withDeadline ? { deadlineMs: 20_000 } : {}) });
        expect({ datatype: answer.datatype, shape: answer.shape, bytes: Buffer.from(answer.bytes).toString('hex'), id: answer.id, model: answer.model, cache: answer.cache }).toEqual(expected);
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  /** One binary HTTP infer of `c` with `id`; the answer's whole body and the headers that frame it. */
  async function inferRaw(c: Case, id: string, noStore: boolean): Promise<{ body: Uint8Array; headerLength: string | null; contentLength: string | null; cache: string | null }> {
    const model = echoModel(c.datatype);
    const encoded = encodeInferRequestBody(
      { id, modelName: model, inputs: [{ name: 'INPUT0', datatype: c.datatype as Datatype, shape: [...c.shape], data: c.bytes }], parameters: {} },
      { binaryInputs: true, binaryDataOutput: true },
    );
    const response = await fetch(`${gateway.url}/v2/models/${model}/infer`, {
      method: 'POST',
      headers: { ...encoded.headers, authorization: `Bearer ${KEY}`, ...(noStore ? { 'cache-control': 'no-store' } : {}) },
      body: encoded.body,
    });
    const body = new Uint8Array(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${new TextDecoder().decode(body)}`);
    return { body, headerLength: response.headers.get(INFER_HEADER_LENGTH), contentLength: response.headers.get('content-length'), cache: response.headers.get('x-cache') };
  }

  // The whole HTTP answer byte for byte, written here from the case alone: the JSON header (the id, the
  // datatype, the shape, binary_data_size), Inference-Header-Content-Length, then the model's bytes. A
  // no-store miss is framed once with the client's id (encoded-on-read.ts's answerWithId); a stored miss
  // puts the id into the stored id-less body; a hit reads the stored entry back under another id.
  it('frames binary answers exactly: header, lengths and bytes, on a no-store miss, a stored miss and the entry read back', async () => {
    const frame = (c: Case, id: string): Uint8Array => {
      const header =
        (id === '' ? '{' : `{"id":${JSON.stringify(id)},`) +
        `"model_name":"${echoModel(c.datatype)}","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"${c.datatype}",` +
        `"shape":[${c.shape[0]},${c.shape[1]}],"parameters":{"binary_data_size":${c.bytes.length}}}]}`;
      return Buffer.concat([Buffer.from(header, 'utf8'), c.bytes]);
    };
    const check = (answer: Awaited<ReturnType<typeof inferRaw>>, c: Case, id: string): void => {
      const expected = frame(c, id);
      expect(Buffer.from(answer.body).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
      expect(answer.headerLength).toBe(String(expected.length - c.bytes.length));
      expect(answer.contentLength).toBe(String(expected.length));
    };
    await fc.assert(
      fc.asyncProperty(caseArb, fc.string({ unit: 'grapheme', maxLength: 10 }), async (c, otherId) => {
        const bypass = await inferRaw(c, c.id, true);
        expect(bypass.cache).toBe('BYPASS');
        check(bypass, c, c.id);
        // Stored (a MISS, or a HIT when an earlier case sent the same tensor), then read back under another id.
        const stored = await inferRaw(c, c.id, false);
        expect(['MISS', 'HIT']).toContain(stored.cache);
        check(stored, c, c.id);
        const hit = await inferRaw(c, otherId, false);
        expect(hit.cache).toBe('HIT');
        check(hit, c, otherId);
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  // A client that asked for JSON still gets its values decoded element by element, 64-bit integers
  // past 2^53 exact (JSON.parse would round them: read as text).
  it('answers JSON when the client asked for it, INT64 beyond 2^53 exact, miss and hit', async () => {
    const values = [2n ** 53n + 1n, -(2n ** 63n), 2n ** 63n - 1n];
    const bytes = new Uint8Array(BigInt64Array.from(values).buffer);
    const encoded = encodeInferRequestBody(
      { id: 'json-int64', modelName: echoModel('INT64'), inputs: [{ name: 'INPUT0', datatype: 'INT64', shape: [1, 3], data: bytes }], parameters: {} },
      { binaryInputs: true, binaryDataOutput: false },
    );
    for (const cache of ['BYPASS', 'MISS', 'HIT']) {
      const response = await fetch(`${gateway.url}/v2/models/${echoModel('INT64')}/infer`, {
        method: 'POST',
        headers: { ...encoded.headers, authorization: `Bearer ${KEY}`, ...(cache === 'BYPASS' ? { 'cache-control': 'no-store' } : {}) },
        body: encoded.body,
      });
      const text = await response.text();
      expect(response.status).toBe(200);
      expect(response.headers.get('x-cache')).toBe(cache);
      expect(response.headers.get(INFER_HEADER_LENGTH)).toBeNull();
      expect(text).toBe(
        `{"id":"json-int64","model_name":"${echoModel('INT64')}","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT64","shape":[1,3],"data":[${values.join(',')}]}]}`,
      );
    }
  }, 60_000);

  // The cache keeps one entry per answer format: a client asking JSON after a binary client's stored miss
  // (and the reverse) is answered in its own format, never with the other client's bytes.
  it('answers each client in its own format when the other format filled the cache first, both orders', async () => {
    const model = echoModel('INT32');
    const ask = async (values: number[], binaryOut: boolean): Promise<{ text: string; body: Buffer; cache: string | null; headerLength: string | null }> => {
      const encoded = encodeInferRequestBody(
        { id: 'fmt', modelName: model, inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, values.length], data: new Uint8Array(Int32Array.from(values).buffer) }], parameters: {} },
        { binaryInputs: true, binaryDataOutput: binaryOut },
      );
      const response = await fetch(`${gateway.url}/v2/models/${model}/infer`, { method: 'POST', headers: { ...encoded.headers, authorization: `Bearer ${KEY}` }, body: encoded.body });
      const body = Buffer.from(await response.arrayBuffer());
      expect(response.status).toBe(200);
      return { text: body.toString('latin1'), body, cache: response.headers.get('x-cache'), headerLength: response.headers.get(INFER_HEADER_LENGTH) };
    };
    const json = (values: number[]): string =>
      `{"id":"fmt","model_name":"${model}","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,${values.length}],"data":[${values.join(',')}]}]}`;
    const binary = (values: number[]): Buffer => {
      const header = `{"id":"fmt","model_name":"${model}","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,${values.length}],"parameters":{"binary_data_size":${values.length * 4}}}]}`;
      return Buffer.concat([Buffer.from(header), Buffer.from(Int32Array.from(values).buffer)]);
    };
    for (const [first, values] of [['binary', [7, -8, 2 ** 31 - 1]], ['json', [9, 10, -(2 ** 31)]]] as const) {
      const order = first === 'binary' ? [true, false] : [false, true];
      for (const binaryOut of [...order, ...order]) {
        const answer = await ask([...values], binaryOut);
        if (binaryOut) expect(answer.body.toString('hex')).toBe(binary([...values]).toString('hex'));
        else expect(answer.text).toBe(json([...values]));
        expect(answer.headerLength === null).toBe(!binaryOut);
      }
    }
  }, 60_000);

  it('takes JSON requests too: values encoded once on the way in come back as the same bytes, miss and hit, and by gRPC', async () => {
    const jsonCase = fc.oneof(
      fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { minLength: 1, maxLength: 6 }).map((v) => ({ datatype: 'INT32' as const, values: v as (number | string)[], bytes: new Uint8Array(Int32Array.from(v as number[]).buffer) })),
      // -0 has no JSON spelling of its own (JSON.stringify(-0) is "0"): left out.
      fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0)), { minLength: 1, maxLength: 6 }).map((v) => ({ datatype: 'FP32' as const, values: v as (number | string)[], bytes: new Uint8Array(Float32Array.from(v as number[]).buffer) })),
      fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 6 }).map((v) => ({ datatype: 'BYTES' as const, values: v as (number | string)[], bytes: encodeBytesElements(v.map((t) => new TextEncoder().encode(t))) })),
    );
    await fc.assert(
      fc.asyncProperty(jsonCase, async ({ datatype, values, bytes }) => {
        const shape = [1, values.length] as const;
        const expected = Buffer.from(bytes).toString('hex');
        const first = await inferJson(echoModel(datatype), datatype, shape, values);
        expect(Buffer.from(first.bytes).toString('hex')).toBe(expected);
        const again = await inferJson(echoModel(datatype), datatype, shape, values);
        expect(again.cache).toBe('HIT');
        expect(Buffer.from(again.bytes).toString('hex')).toBe(expected);
        const byGrpc = await infer('grpc', { datatype, shape, bytes, id: 'json-then-grpc' });
        expect(Buffer.from(byGrpc.bytes).toString('hex')).toBe(expected);
      }),
      { numRuns: 30 },
    );
  }, 120_000);
});
