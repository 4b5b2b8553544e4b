/**
 * Issue 17 item 3: the gateway forwards a gRPC client's ModelInferRequest as received with its own
 * fields (version, id, priority, timeout, the tenant-scoped sequence id) appended, and HTTP binary
 * tensors as slices of the request body. Hostile framing on those paths gets INVALID_ARGUMENT / 400
 * and is never forwarded: a last field whose length lies (it would swallow the appended fields and
 * keep the client's own sequence id), unterminated or stray groups, field number 0, over-long varints;
 * and over HTTP, binary_data_size values that lie, overlap or leave bytes over. A good request is
 * served after all of it. Real redis-server, a real node, the gateway in this process.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { Client, Metadata, credentials, status, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferParameterSchema, ModelInferRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, waitFor, type RedisServer } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { simpleProto } from '../../gateway/test/grpc-front/front-client.js';

const KEY = 'tsk_sec-forwarded-bytes';

describe('forwarded request bytes under hostile framing (redis + node + gateway)', () => {
  let redis: RedisServer;
  let node: NodeProcess;
  let gateway: RunningGateway;
  let raw: Client;

  beforeAll(async () => {
    redis = await startRedisServer();
    node = await startNodeProcess(['--redis-url', redis.url, '--node-id', 'sec-forwarded-node', '--advertise-host', '127.0.0.1']);
    const config = loadGatewayConfig(
      JSON.stringify({ tiers: { standard: { queueTimeoutMs: 20_000 } }, tenants: [{ id: 'tf', tier: 'standard', keys: [{ id: 'tf1', hash: await sha256Hex(KEY) }] }] }),
    );
    gateway = await startGateway({ config, redisUrl: redis.url, port: 0, grpcPort: 0, host: '127.0.0.1', logger: silentLogger, fleet: { refreshMs: 200 } });
    await waitFor(() => gateway.directory.candidates('simple').length === 1, { what: 'the node in the fleet view', timeoutMs: 30_000 });
    raw = new Client(gateway.grpcTarget!, credentials.createInsecure());
  }, 60_000);

  afterAll(async () => {
    raw?.close();
    await gateway?.close({ graceMs: 1000 });
    await node?.stop();
    await redis?.stop();
  });

  /** ModelInfer with `bytes` as the message, exactly; resolves with the status (null: OK) and the answer. */
  const send = (bytes: Uint8Array) =>
    new Promise<{ error: ServiceError | null; answer?: Buffer }>((resolve) => {
      const md = new Metadata();
      md.set('authorization', `Bearer ${KEY}`);
      md.set('cache-control', 'no-store');
      raw.makeUnaryRequest('/inference.GRPCInferenceService/ModelInfer', (b: Buffer) => b, (b: Buffer) => b, Buffer.from(bytes), md, (error, answer) =>
        resolve({ error, ...(answer === undefined ? {} : { answer }) }),
      );
    });

  const good = toBinary(ModelInferRequestSchema, simpleProto(3, 'good'));

  it('refuses messages whose framing would swallow the appended fields, with INVALID_ARGUMENT', async () => {
    const cases: [string, Uint8Array][] = [
      // raw_input_contents (7) claiming 40 bytes that are not there: exactly what the gateway would append.
      ['a length that lies', Uint8Array.of(...good, 0x3a, 40)],
      ['an unterminated group', Uint8Array.of(...good, (99 << 3) | 3)],
      ['a stray end of group', Uint8Array.of(...good, (99 << 3) | 4)],
      ['field number 0', Uint8Array.of(...good, 0x00, 0x01)],
      ['an over-long varint', Uint8Array.of(...good, 0x08, ...new Array(11).fill(0xff), 0x01)],
      ['a fixed64 past the end', Uint8Array.of(...good, (99 << 3) | 1, 1, 2, 3)],
    ];
    for (const [what, bytes] of cases) {
      const { error } = await send(bytes);
      expect(error?.code, what).toBe(status.INVALID_ARGUMENT);
      expect(error?.details, what).toMatch(/malformed inference\.ModelInferRequest/);
    }
  });

  it('lets a client\'s own trailing parameters count only as its own: the gateway\'s come after them', async () => {
    // A valid message ending in a parameters entry of the client's (priority 1, sequence fields on a
    // model without sequences): the gateway reads it as the node would (last entry wins), and its
    // own entries follow it, so the request is served with the gateway's priority and the answer is right.
    const entry = toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, { parameters: { priority: create(InferParameterSchema, { parameterChoice: { case: 'int64Param', value: 1n } }) } }));
    const { error, answer } = await send(Uint8Array.of(...good, ...entry));
    expect(error).toBeNull();
    expect(answer!.length).toBeGreaterThan(0);
  });

  it('refuses HTTP binary sections whose sizes lie, overlap or leave bytes over, with 400', async () => {
    const header = (sizes: number[]) =>
      JSON.stringify({
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: sizes[0] } },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: sizes[1] } },
        ],
      });
    const post = async (json: string, binary: number) => {
      const head = new TextEncoder().encode(json);
      const body = new Uint8Array(head.length + binary);
      body.set(head);
      const response = await fetch(`${gateway.url}/v2/models/simple/infer`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/octet-stream', 'inference-header-content-length': String(head.length) },
        body,
      });
      return { status: response.status, text: await response.text() };
    };
    for (const [what, sizes, binary] of [
      ['sizes past the body', [64, 64], 100],
      ['the same bytes twice (overlap)', [64, 64], 64],
      ['bytes left over', [64, 64], 160],
      ['a negative size', [-64, 192], 128],
      ['a size that is not the tensor\'s', [60, 68], 128],
    ] as const) {
      const answer = await post(header([...sizes]), binary);
      expect(answer.status, `${what}: ${answer.text}`).toBe(400);
    }
    // A header length that lies about where the JSON ends.
    const json = header([64, 64]);
    const body = new Uint8Array(new TextEncoder().encode(json).length + 128);
    body.set(new TextEncoder().encode(json));
    for (const length of [json.length + 200, json.length - 5, -1]) {
      const response = await fetch(`${gateway.url}/v2/models/simple/infer`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/octet-stream', 'inference-header-content-length': String(length) },
        body,
      });
      expect(response.status, `header length ${length}`).toBe(400);
      await response.arrayBuffer();
    }
  });

  it('serves a good request after all of it, over both protocols', async () => {
    const { error, answer } = await send(good);
    expect(error).toBeNull();
    expect(answer!.length).toBeGreaterThan(0);
    const http = await fetch(`${gateway.url}/v2/models/simple/infer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Array(16).fill(1) }, { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Array(16).fill(2) }] }),
    });
    expect(http.status).toBe(200);
    expect(((await http.json()) as { outputs: { data: number[] }[] }).outputs[0]!.data).toEqual(new Array(16).fill(3));
  });
});
