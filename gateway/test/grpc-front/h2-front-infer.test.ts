/**
 * The front door's ModelInfer fast path (h2-front-infer.ts) against grpc-js itself: one gateway, two
 * gRPC front doors on its one app (the one startGateway opens, with the fast path, and a second with
 * every call left to grpc-js), the same raw HTTP/2 request sent to each, and the answers compared:
 * status, message, trailing metadata, and the message bytes when OK. Raw HTTP/2, because grpc-js's
 * client cannot send the malformed framings checked here. Real redis-server, a real node process.
 */
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelInferRequestSchema, ModelInferResponseSchema, type ModelInferRequest } from '../../../shared/src/gen/grpc_service_pb.js';
import { decodeGrpcMessage, frameGrpcMessage, grpcMessagePrefix } from '../../../shared/src/grpc/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../../shared/test/support/index.js';
import { createGrpcFront, type GrpcFront } from '../../src/adapters/grpc-front/index.js';
import { loadGatewayConfig } from '../../src/config/index.js';
import { sha256Hex } from '../../src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../src/entry-node.js';
import { startNodeProcess, type NodeProcess } from '../support/test-node-process.js';
import { int32Of, simpleProto, sleepyProto } from './front-client.js';

const MODEL_INFER = '/inference.GRPCInferenceService/ModelInfer';
const MAX_BODY = 64 * 1024;
const KEY = { a: 'tsk_h2-front-a', limitedFast: 'tsk_h2-front-l1', limitedPlain: 'tsk_h2-front-l2', hasty: 'tsk_h2-front-hasty' };
/** Metadata the pipeline answers with (call-bridge.ts's PASSED): compared by presence, values where stable. */
const ANSWER_KEYS = ['x-cache', 'age', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'x-request-id'];

interface Answer {
  readonly status: number;
  readonly message: string;
  readonly body: Buffer;
  readonly headers: IncomingHttpHeaders;
  /** Status-carrying headers: the trailers, or the headers of a trailers-only answer. */
  readonly trailers: IncomingHttpHeaders;
}

function call(session: ClientHttp2Session, body: Buffer, extraHeaders: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': MODEL_INFER, 'content-type': 'application/grpc', te: 'trailers', ...extraHeaders });
    let headers: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (h) => (headers = h));
    stream.on('trailers', (t) => (trailers = t));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => {
      const statusHeaders = trailers ?? headers;
      resolve({ status: Number(statusHeaders['grpc-status']), message: decodeGrpcMessage(statusHeaders['grpc-message']), body: Buffer.concat(chunks), headers, trailers: statusHeaders });
    });
    stream.end(body);
  });
}

const framed = (msg: ModelInferRequest): Buffer => frameGrpcMessage(toBinary(ModelInferRequestSchema, msg));
const auth = (key: string, extra: Record<string, string> = {}): Record<string, string> => ({ authorization: `Bearer ${key}`, ...extra });
/** The answer metadata present, with the values that do not change from call to call. */
function answerMetadata(answer: Answer): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ANSWER_KEYS) {
    const value = answer.trailers[key];
    if (value === undefined) continue;
    out[key] = key === 'x-cache' || key === 'ratelimit-limit' ? String(value) : '(present)';
  }
  return out;
}

describe.each([{ port: 'grpc-js', rawH2: false }, { port: 'the raw HTTP/2 front (grpcRawH2)', rawH2: true }])('gateway ModelInfer on the h2 stream of $port vs grpc-js (redis + node + gateway, raw HTTP/2)', ({ rawH2 }) => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;
  let plainFront: GrpcFront;
  let fast: ClientHttp2Session;
  let plain: ClientHttp2Session;

  /** Sends to the fast front door, then to the grpc-js one; answers [fast, plain]. */
  const both = async (body: Buffer, headers?: Record<string, string>): Promise<[Answer, Answer]> => [await call(fast, body, headers), await call(plain, body, headers)];
  /** grpc-js also sends `grpc-message: OK` with an OK status; only a failure's message means something. */
  const shown = (answer: Answer) => ({ status: answer.status, message: answer.status === status.OK ? '' : answer.message, metadata: answerMetadata(answer) });
  const expectSame = (a: Answer, b: Answer): void => {
    expect(shown(a)).toEqual(shown(b));
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'h2-front-node', '--advertise-host', '127.0.0.1']);
    const config = loadGatewayConfig(
      JSON.stringify({
        maxBodyBytes: MAX_BODY,
        tiers: {
          standard: { queueTimeoutMs: 20_000 },
          free: { queueTimeoutMs: 20_000, rateLimits: { requestsPerSecond: 0.01, burst: 1 } },
          premium: { queueTimeoutMs: 100 },
        },
        tenants: [
          { id: 'ta', tier: 'standard', keys: [{ id: 'ta1', hash: await sha256Hex(KEY.a) }] },
          { id: 'tl1', tier: 'free', keys: [{ id: 'tl1k', hash: await sha256Hex(KEY.limitedFast) }] },
          { id: 'tl2', tier: 'free', keys: [{ id: 'tl2k', hash: await sha256Hex(KEY.limitedPlain) }] },
          { id: 'th', tier: 'premium', keys: [{ id: 'th1', hash: await sha256Hex(KEY.hasty) }] },
        ],
        cache: { models: { simple: { enabled: true } } },
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, grpcPort: 0, grpcRawH2: rawH2, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('sleepy').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
    plainFront = createGrpcFront(gateway.app, { maxReceiveBytes: config.maxBodyBytes, logger: silentLogger, modelInferFastPath: false });
    const { port } = await plainFront.listen(0, '127.0.0.1');
    fast = connect(`http://${gateway.grpcTarget!}`);
    plain = connect(`http://127.0.0.1:${port}`);
  }, 60_000);

  afterAll(async () => {
    fast?.close();
    plain?.close();
    await plainFront?.close(1000);
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
  });

  it('answers OK with the same message bytes and metadata (a cache bypass, then a hit)', async () => {
    const [a, b] = await both(framed(simpleProto(5, 'r1')), auth(KEY.a, { 'cache-control': 'no-store' }));
    expect(a.status).toBe(status.OK);
    expectSame(a, b);
    expect(a.trailers['x-cache']).toBe('BYPASS');
    expect(a.headers['x-cache']).toBe('BYPASS');
    expect(a.body).toEqual(b.body);
    const response = fromBinary(ModelInferResponseSchema, new Uint8Array(a.body.subarray(5)));
    expect(response.id).toBe('r1');
    expect(int32Of(response.rawOutputContents[0]!)).toEqual(Array.from({ length: 16 }, (_, i) => 5 + i + 1));

    await call(fast, framed(simpleProto(6, 'r2')), auth(KEY.a));
    const [hitA, hitB] = await both(framed(simpleProto(6, 'r2')), auth(KEY.a));
    expect(hitA.trailers['x-cache']).toBe('HIT');
    expect(hitA.headers['x-cache']).toBe('HIT');
    expectSame(hitA, hitB);
    expect(hitA.body).toEqual(hitB.body);
    // Without an id the hit is the cached body itself, whose gRPC answer the fast path keeps: the same bytes each time.
    await call(fast, framed(simpleProto(8)), auth(KEY.a));
    const [first, plainHit] = await both(framed(simpleProto(8)), auth(KEY.a));
    const again = await call(fast, framed(simpleProto(8)), auth(KEY.a));
    for (const answer of [first, again]) {
      expect(answer.trailers['x-cache']).toBe('HIT');
      expectSame(answer, plainHit);
      expect(answer.body).toEqual(plainHit.body);
    }
  });

  it('answers no message and two messages UNIMPLEMENTED, naming the method as unary (grpc-js: "server streaming method")', async () => {
    for (const [body, words] of [
      [Buffer.alloc(0), 'Received no request message for unary method'],
      [Buffer.concat([framed(simpleProto(1)), framed(simpleProto(1))]), 'Received a second request message for unary method'],
    ] as const) {
      const [a, b] = await both(body, auth(KEY.a));
      expect(b.status).toBe(status.UNIMPLEMENTED);
      expect(shown(a)).toEqual({ ...shown(b), message: `${words} ${MODEL_INFER}` });
    }
  });

  it.each([
    ['a message over the receive limit', () => frameGrpcMessage(Buffer.alloc(MAX_BODY + 1)), status.RESOURCE_EXHAUSTED],
    ['bytes that are no ModelInferRequest', () => frameGrpcMessage(Buffer.from([0xff, 0xff, 0xff])), status.INVALID_ARGUMENT],
    ['an unknown model', () => framed({ ...simpleProto(1), modelName: 'no_such_model' }), status.INVALID_ARGUMENT],
    ['no model name', () => framed({ ...simpleProto(1), modelName: '' }), status.INVALID_ARGUMENT],
  ])('answers %s with the status and message grpc-js gives', async (_case, body, expected) => {
    const [a, b] = await both(body(), auth(KEY.a));
    expect(b.status).toBe(expected);
    expectSame(a, b);
  });

  it('answers a truncated message INTERNAL (grpc-js: UNIMPLEMENTED, no message), as the node does', async () => {
    const whole = framed(simpleProto(1));
    for (const body of [whole.subarray(0, whole.length - 3), grpcMessagePrefix(10).subarray(0, 3)]) {
      const [a, b] = await both(body, auth(KEY.a));
      expect(a.status).toBe(status.INTERNAL);
      expect(a.message).toMatch(/truncated|ends inside a message prefix/);
      expect(b.status).toBe(status.UNIMPLEMENTED);
    }
  });

  it('serves a ModelInfer on the h2 stream with and without a grpc-timeout; grpc-js only where it must', async () => {
    // grpc-js's answers carry grpc-accept-encoding in their headers; the fast path's do not.
    const served = async (headers: Record<string, string>): Promise<'h2' | 'grpc-js'> => {
      const answer = await call(fast, framed(simpleProto(4)), auth(KEY.a, { 'cache-control': 'no-store', ...headers }));
      expect(answer.status).toBe(status.OK);
      return answer.headers['grpc-accept-encoding'] === undefined ? 'h2' : 'grpc-js';
    };
    expect(await served({})).toBe('h2');
    expect(await served({ 'grpc-timeout': '20S' })).toBe('h2');
    expect((await call(plain, framed(simpleProto(4)), auth(KEY.a))).headers['grpc-accept-encoding']).toBeDefined();
  });

  it('leaves an unparsable grpc-timeout and a compressed request to grpc-js: the same answers', async () => {
    const [badA, badB] = await both(framed(simpleProto(2)), auth(KEY.a, { 'grpc-timeout': 'soon' }));
    expect(badA.status).toBe(status.INTERNAL);
    expectSame(badA, badB);
    const zipped = gzipSync(toBinary(ModelInferRequestSchema, simpleProto(3)));
    const compressed = Buffer.concat([Buffer.from([1, 0, 0, 0, 0]), zipped]);
    compressed.writeUInt32BE(zipped.length, 1);
    const [gzA, gzB] = await both(compressed, auth(KEY.a, { 'grpc-encoding': 'gzip', 'cache-control': 'no-store' }));
    expect(gzA.status).toBe(status.OK);
    expectSame(gzA, gzB);
    expect(gzA.body).toEqual(gzB.body);
  });

  it('answers a passing grpc-timeout DEADLINE_EXCEEDED', async () => {
    const [a, b] = await both(framed(sleepyProto(400)), auth(KEY.a, { 'grpc-timeout': '100m' }));
    expect(a.status).toBe(status.DEADLINE_EXCEEDED);
    expect(b.status).toBe(status.DEADLINE_EXCEEDED);
    // Two timers end the call at the same moment: the front door's ("Deadline exceeded") and the
    // upstream call's, answered through the pipeline with its RateLimit metadata. Either may win on
    // either path (here the upstream's usually wins on the fast path, grpc-js's on the other).
    for (const answer of [a, b]) expect(answer.message).toMatch(/^Deadline exceeded$|^the request deadline passed before node 'h2-front-node' answered$/);
  });

  it('refuses a call without a key or with a bad one UNAUTHENTICATED, with the same words', async () => {
    const [noneA, noneB] = await both(framed(simpleProto(4)));
    expect(noneA.status).toBe(status.UNAUTHENTICATED);
    expectSame(noneA, noneB);
    const [badA, badB] = await both(framed(simpleProto(4)), { 'x-api-key': 'tsk_not-a-key' });
    expect(badA.status).toBe(status.UNAUTHENTICATED);
    expectSame(badA, badB);
  });

  it('limits as grpc-js does: RESOURCE_EXHAUSTED with retry-after and RateLimit metadata', async () => {
    // One tenant per front door, same tier: each passes its burst of one, then is limited.
    const answers: Answer[] = [];
    for (const [session, key] of [[fast, KEY.limitedFast], [plain, KEY.limitedPlain]] as const) {
      expect((await call(session, framed(simpleProto(7)), auth(key, { 'cache-control': 'no-store' }))).status).toBe(status.OK);
      answers.push(await call(session, framed(simpleProto(7)), auth(key, { 'cache-control': 'no-store' })));
    }
    const [a, b] = answers as [Answer, Answer];
    expect(a.status).toBe(status.RESOURCE_EXHAUSTED);
    expect(a.trailers['retry-after']).toBeDefined();
    expect(a.message.replace(/[0-9]+/g, 'N')).toBe(b.message.replace(/[0-9]+/g, 'N'));
    expect(answerMetadata(a)).toEqual(answerMetadata(b));
  });

  it('refuses at admission UNAVAILABLE with a retry hint when the model cannot answer within the tier', async () => {
    // A patient call teaches the gateway sleepy's execution time (400 ms); the premium tier here waits 100 ms.
    expect((await call(fast, framed(sleepyProto(400)), auth(KEY.a))).status).toBe(status.OK);
    const [a, b] = await both(framed(sleepyProto(400)), auth(KEY.hasty));
    expect(a.status).toBe(status.UNAVAILABLE);
    expect(a.message).toMatch(/sleepy/);
    expect(a.message.replace(/[0-9]+/g, 'N')).toBe(b.message.replace(/[0-9]+/g, 'N'));
    expect(b.status).toBe(status.UNAVAILABLE);
    expect(answerMetadata(a)).toEqual(answerMetadata(b));
    expect(Number(a.trailers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});
