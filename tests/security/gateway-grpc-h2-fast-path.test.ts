/**
 * Issue 17: the gateway's ModelInfer fast path reads HTTP/2 streams itself, ahead of grpc-js
 * (gateway/src/adapters/grpc-front/h2-front-infer.ts): a new way in. Hostile raw HTTP/2 against it: a
 * prefix declaring a 4 GiB message (refused before the body comes), a body that never ends past the
 * limit, resets mid-body and mid-call, a zero timeout, header values grpc-js would refuse, repeated
 * keys. Each gets a status or nothing (a reset has no one to answer), never a crash, and the gateway
 * serves a good request after all of it. Real redis-server, a real node process, the gateway in this
 * process (a crash would end the test run).
 */
import { connect, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { toBinary } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelInferRequestSchema, type ModelInferRequest } from '../../shared/src/gen/grpc_service_pb.js';
import { decodeGrpcMessage, frameGrpcMessage, grpcMessagePrefix } from '../../shared/src/grpc/index.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { simpleProto, sleepyProto } from '../../gateway/test/grpc-front/front-client.js';

const KEY = 'tsk_sec-h2-fast-path';
const MAX_BODY = 64 * 1024;
const MODEL_INFER = '/inference.GRPCInferenceService/ModelInfer';

interface Answer {
  readonly status: number;
  readonly message: string;
}

const framed = (msg: ModelInferRequest): Buffer => frameGrpcMessage(toBinary(ModelInferRequestSchema, msg));

describe('gRPC front door fast path under hostile HTTP/2 (redis + node + gateway)', () => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;
  let session: ClientHttp2Session;

  /** A ModelInfer stream, with the tenant's key unless `headers` carries an `x-api-key` of its own. */
  const open = (headers: Record<string, string | string[]> = {}): ClientHttp2Stream =>
    session.request({
      ':method': 'POST',
      ':path': MODEL_INFER,
      'content-type': 'application/grpc',
      te: 'trailers',
      ...('x-api-key' in headers ? {} : { authorization: `Bearer ${KEY}` }),
      ...headers,
    });
  /** The call's status as soon as it arrives (trailers-only headers or trailers); the request side is left as the caller left it. */
  const answerOf = (stream: ClientHttp2Stream): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const settle = (h: IncomingHttpHeaders): void => {
        if (h['grpc-status'] !== undefined) resolve({ status: Number(h['grpc-status']), message: decodeGrpcMessage(h['grpc-message']) });
      };
      stream.on('response', settle);
      stream.on('trailers', settle);
      stream.on('data', () => undefined);
      stream.on('error', reject);
      stream.on('close', () => reject(new Error('the stream closed without a status')));
    });
  const send = (body: Buffer, headers: Record<string, string | string[]> = {}): Promise<Answer> => {
    const stream = open(headers);
    const answer = answerOf(stream);
    stream.end(body);
    return answer;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'sec-h2-fast-node', '--advertise-host', '127.0.0.1']);
    const config = loadGatewayConfig(
      JSON.stringify({
        maxBodyBytes: MAX_BODY,
        tiers: { standard: { queueTimeoutMs: 20_000 } },
        tenants: [{ id: 'ts', tier: 'standard', keys: [{ id: 'ts1', hash: await sha256Hex(KEY) }] }],
      }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, grpcPort: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('sleepy').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
    session = connect(`http://${gateway.grpcTarget!}`);
  }, 60_000);

  afterAll(async () => {
    session?.close();
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
  });

  it('refuses a prefix declaring a 4 GiB message at once, before any body and with the request still open', async () => {
    const stream = open();
    const answer = answerOf(stream);
    stream.write(grpcMessagePrefix(0xffff_ffff));
    // The request side is never ended: the answer cannot be waiting for the body.
    const got = await answer;
    stream.close();
    expect(got.status).toBe(status.RESOURCE_EXHAUSTED);
    expect(got.message).toBe(`Received message larger than max (4294967295 vs ${MAX_BODY})`);
  });

  it('stops reading a body that goes on past the limit, answers RESOURCE_EXHAUSTED, and drops the rest', async () => {
    const stream = open();
    const answer = answerOf(stream);
    // A prefix that declares little, then far more bytes than it declared, in many writes.
    stream.write(grpcMessagePrefix(8));
    const chunk = Buffer.alloc(16 * 1024, 7);
    for (let i = 0; i < 16; i++) stream.write(chunk);
    stream.end();
    const got = await answer;
    expect(got.status).toBe(status.RESOURCE_EXHAUSTED);
  });

  it('survives resets: in the middle of the body, and while the call is at the node', async () => {
    const midBody = open();
    midBody.on('error', () => undefined);
    midBody.write(framed(simpleProto(1)).subarray(0, 20));
    midBody.close();
    const atNode = open();
    atNode.on('error', () => undefined);
    atNode.end(framed(sleepyProto(300)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    atNode.close();
    await new Promise((resolve) => atNode.on('close', resolve));
    expect((await send(framed(simpleProto(2)))).status).toBe(status.OK);
  });

  it('answers a zero grpc-timeout DEADLINE_EXCEEDED without running the call', async () => {
    const got = await send(framed(simpleProto(3)), { 'grpc-timeout': '0m' });
    expect(got).toEqual({ status: status.DEADLINE_EXCEEDED, message: 'Deadline exceeded' });
  });

  it('answers a key with text grpc-js would refuse (Latin-1) and a key sent twice UNAUTHENTICATED, never a crash', async () => {
    // Latin-1 text in a header value: grpc-js drops such a value from the call's metadata, so do we.
    const latin1 = await send(framed(simpleProto(4)), { authorization: `Bearer ${KEY}\u00e9` });
    expect(latin1.status).toBe(status.UNAUTHENTICATED);
    // HTTP/2 lets a client repeat a header; both values are read, joined, and match no key.
    const twice = await send(framed(simpleProto(4)), { 'x-api-key': [KEY, KEY] });
    expect(twice.status).toBe(status.UNAUTHENTICATED);
  });

  it('still serves a good request after all of the above', async () => {
    expect(await send(framed(simpleProto(5)))).toEqual({ status: status.OK, message: '' });
  });
});
