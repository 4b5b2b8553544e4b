/**
 * Too many streams: one connection starting more requests at once than the server allows. A real node
 * process (bin/tessera-node.js --grpc-max-concurrent-streams 4) over the test repository of
 * test-node-process.ts, whose `sleepy` model (one instance, Triton's default scheduler, so requests
 * run one after the other) holds each request the milliseconds it is sent; the node's Prometheus
 * gauge of pending requests shows how many of them the node holds. And the gateway (startGateway) in
 * front of it for the HTTP/1.1 counterpart, pipelining. Proves:
 * - grpc-js over the limit on one connection: the calls beyond it wait in the client for a free
 *   stream (the node never holds more than the limit), then every call answers OK with its own
 *   output; another connection is served while the first is at its limit.
 * - a raw HTTP/2 client opening more streams than the node's SETTINGS allow, before acknowledging
 *   them: the streams beyond the limit are refused with RST_STREAM REFUSED_STREAM (not processed),
 *   the others are served, the connection stays up.
 * - a raw client that acknowledged the limit and still exceeds it loses its connection (GOAWAY), and
 *   only that one: another client's connection stays READY throughout, the node drops the queued
 *   work of the closed one and serves a new client.
 * - the gateway on node:http, with more pipelined requests on one HTTP/1.1 connection than
 *   `maxPipelinedRequests`: the first ones are forwarded and answered in order, the next gets 503 +
 *   Connection: close without reaching the node, and a new connection is served. On the raw HTTP/1.1
 *   reader (the default) a connection's requests are read one at a time: all are answered, in order.
 * Every scenario ends by checking that the node process is alive and answers a new client.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { Client, connectivityState, credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ModelInferRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition, inferRequestToProto, inferResponseFromProto } from '../../shared/src/grpc/index.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import { startNodeProcess, type NodeProcess } from '../../gateway/test/support/test-node-process.js';
import { simpleRequest, sleepyRequest } from '../../gateway/test/support/test-node-requests.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway } from '../../gateway/src/entry-node.js';
import { connectRawHttp2, H2_ERROR } from './support/raw-http2.js';
import { metricValue, simpleBody, sleepyBody } from './support/stack.js';
import { withinMs } from './support/timing.js';

const LIMIT = 4;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
const svc = clientServiceDefinition(GRPCInferenceService);

const floats = (bytes: Uint8Array) => Array.from(new Float32Array(bytes.slice().buffer));
const ints = (bytes: Uint8Array) => Array.from(new Int32Array(bytes.slice().buffer));
const sleepyMessage = (ms: number) => toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, inferRequestToProto(sleepyRequest(ms))));

let node: NodeProcess;
beforeAll(async () => {
  node = await startNodeProcess(['--grpc-max-concurrent-streams', String(LIMIT)]);
});
afterAll(async () => {
  await node?.stop();
});

/**
 * A client with its own connection: grpc-js shares connections between Clients of the same target and
 * options unless told not to, and a shared one would queue behind the connection under test.
 */
const ownConnection = () => new Client(node.grpcAddress, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
const nodeMetrics = async () => (await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`)).text();
/** Requests of `sleepy` waiting at the node (the one executing is not counted). */
const pendingSleepy = async () => metricValue(await nodeMetrics(), /^nv_inference_pending_request_count\{model="sleepy"/) ?? 0;
/** Requests of `sleepy` the node has executed successfully so far. */
const servedSleepy = async () => metricValue(await nodeMetrics(), /^nv_inference_request_success\{model="sleepy"/) ?? 0;

/** The node process is alive and answers a `simple` call on a new connection, correctly. */
async function nodeServesNewClient(): Promise<void> {
  expect(node.process.exitCode).toBeNull();
  expect(node.process.signalCode).toBeNull();
  const client = ownConnection();
  try {
    const { response } = await withinMs(callUnary(client, svc.modelInfer, inferRequestToProto(simpleRequest(0))), 15_000, "a new client's call");
    // simple: OUTPUT0 = INPUT0 + INPUT1 = 0..15 + 1.
    const sum = inferResponseFromProto(response).outputs.find((o) => o.name === 'OUTPUT0');
    expect(ints(sum!.data)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
  } finally {
    client.close();
  }
}

describe('too many streams on one gRPC connection (node with --grpc-max-concurrent-streams 4)', () => {
  it('grpc-js: the calls beyond the limit wait in the client for a free stream, the node never holds more than the limit, all answer OK with their own outputs; another connection is served meanwhile', async () => {
    const client = ownConnection();
    const before = await servedSleepy();
    // The first call holds the model's only instance for 4 s, so the connection sits at its limit
    // (one call executing, three pending at the node, eight waiting in the client) that long.
    const sleeps = [4000, ...Array.from({ length: 11 }, (_, i) => 20 + i)];
    let finished = 0;
    const calls = sleeps.map((ms, i) =>
      callUnary(client, svc.modelInfer, inferRequestToProto(sleepyRequest(ms, `call-${i}`))).then((result) => {
        finished++;
        return result;
      }),
    );
    let maxPending = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxPending = Math.max(maxPending, await pendingSleepy());
        await sleep(20);
      }
    })();
    try {
      await waitFor(async () => (await pendingSleepy()) >= LIMIT - 1, { what: 'the connection at its limit' });
      // The limit is per connection: a new one is served while this one is full.
      await nodeServesNewClient();
      expect(finished, 'the full connection’s calls were still running').toBe(0);

      const results = await withinMs(Promise.all(calls), 60_000, 'the twelve calls');
      results.forEach(({ response }, i) => {
        const decoded = inferResponseFromProto(response);
        expect(decoded.id).toBe(`call-${i}`);
        expect(floats(decoded.outputs[0]!.data)).toEqual([sleeps[i]]);
      });
    } finally {
      sampling = false;
      await sampler;
      client.close();
    }
    // Without the limit all eleven calls behind the first wait at the node at once.
    expect(maxPending).toBeGreaterThanOrEqual(LIMIT - 1);
    expect(maxPending).toBeLessThanOrEqual(LIMIT);
    expect((await servedSleepy()) - before).toBe(sleeps.length);
    await nodeServesNewClient();
  });

  it('a raw client that opens 12 streams before acknowledging the SETTINGS: the first 4 are served, the 8 beyond are refused with REFUSED_STREAM and never run, the connection stays up', async () => {
    const before = await servedSleepy();
    const raw = await connectRawHttp2(Number(node.grpcAddress.split(':')[1]));
    try {
      const ids = raw.openGrpcCalls(12, svc.modelInfer.path, sleepyMessage(50));
      expect((await raw.serverSettings).get(SETTINGS_MAX_CONCURRENT_STREAMS)).toBe(LIMIT);
      await waitFor(() => raw.settled(), { what: 'every stream answered or refused', timeoutMs: 30_000 });

      const outcomes = ids.map((id) => ({ id, ...raw.streams.get(id)! }));
      const served = outcomes.filter((s) => s.rstCode === undefined);
      expect(served.map((s) => s.id)).toEqual(ids.slice(0, LIMIT));
      for (const s of served) expect(s, `stream ${s.id}`).toMatchObject({ ended: true, dataBytes: expect.any(Number) });
      for (const s of served) expect(s.dataBytes, `stream ${s.id} carried a response message`).toBeGreaterThan(5);
      for (const s of outcomes.slice(LIMIT)) expect(s.rstCode, `stream ${s.id}`).toBe(H2_ERROR.REFUSED_STREAM);
      expect(raw.goaway).toBeUndefined();
      expect(raw.closed).toBe(false);
      // REFUSED_STREAM means "not processed": only the served four ran.
      expect((await servedSleepy()) - before).toBe(LIMIT);
    } finally {
      raw.destroy();
    }
    await nodeServesNewClient();
  });

  it('a raw client that acknowledged the limit and still opens 12 streams loses its connection (GOAWAY with an error), only that one: another connection stays up throughout, the dropped work leaves the queue, and the node serves a new client', async () => {
    // A bystander with its own connection, established before the abuse: it must stay READY throughout
    // (a node that dropped every connection, or died, would take it through another state).
    const bystander = ownConnection();
    const channel = bystander.getChannel();
    let bystanderLeftReady = false;
    try {
      await callUnary(bystander, svc.modelInfer, inferRequestToProto(simpleRequest(1)));
      expect(channel.getConnectivityState(false)).toBe(connectivityState.READY);
      channel.watchConnectivityState(connectivityState.READY, Date.now() + 600_000, (error) => {
        if (error === undefined) bystanderLeftReady = true;
      });

      const raw = await connectRawHttp2(Number(node.grpcAddress.split(':')[1]));
      try {
        expect((await raw.serverSettings).get(SETTINGS_MAX_CONCURRENT_STREAMS)).toBe(LIMIT);
        raw.ackSettings();
        const ids = raw.openGrpcCalls(12, svc.modelInfer.path, sleepyMessage(200));
        await waitFor(() => raw.closed, { what: 'the node to close the offending connection', timeoutMs: 30_000 });
        expect(raw.goaway, 'a GOAWAY before the close').toBeDefined();
        expect(raw.goaway!.errorCode).not.toBe(H2_ERROR.NO_ERROR);
        expect(ids.filter((id) => raw.streams.get(id)!.dataBytes > 0).length).toBeLessThanOrEqual(LIMIT);
      } finally {
        raw.destroy();
      }
      await waitFor(async () => (await pendingSleepy()) === 0, { what: 'the closed connection’s requests gone from the queue', timeoutMs: 30_000 });
      await callUnary(bystander, svc.modelInfer, inferRequestToProto(simpleRequest(2)));
      expect(bystanderLeftReady, 'the bystander’s connection left READY').toBe(false);
      expect(channel.getConnectivityState(false)).toBe(connectivityState.READY);
    } finally {
      bystanderLeftReady = false;
      bystander.close();
    }
    await nodeServesNewClient();
  });
});

describe('too many pipelined requests on one HTTP/1.1 connection (gateway with maxPipelinedRequests 4)', () => {
  it('the first 4 are forwarded and answered 200 in order, the fifth gets 503 + Connection: close and never reaches the node; a new connection is served', async () => {
    const key = 'tsk_pipelining-secret';
    const gateway = await startGateway({
      config: loadGatewayConfig(
        JSON.stringify({
          maxPipelinedRequests: LIMIT,
          tenants: [{ id: 'p', tier: 'premium', keys: [{ id: 'p1', hash: await sha256Hex(key) }] }],
        }),
      ),
      redisUrl: null,
      nodes: [{ id: 'n1', grpc: node.grpcAddress, http: null }],
      port: 0,
      host: '127.0.0.1',
      // node:http's bound: the raw reader (below) never has more than one request of a connection in progress.
      httpRawReader: false,
      logger: silentLogger,
    });
    try {
      const before = await servedSleepy();
      // 300 ms each, one after the other at the node: the first four are still in progress when
      // the rest of the single write has been parsed.
      const body = sleepyBody(300);
      const request =
        `POST /v2/models/sleepy/infer HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const socket = connect(gateway.port, '127.0.0.1');
      const received = new Promise<string>((resolve, reject) => {
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      socket.write(request.repeat(12));
      const text = await withinMs(received, 30_000, 'the gateway to answer and close the connection');

      const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
      expect(statuses).toEqual([200, 200, 200, 200, 503]);
      const refusal = text.slice(text.indexOf('HTTP/1.1 503'));
      expect(refusal).toMatch(/\r\nconnection: close\r\n/i);
      expect(JSON.parse(refusal.slice(refusal.indexOf('\r\n\r\n') + 4))).toEqual({ error: expect.stringMatching(/not processed/) });
      expect((await servedSleepy()) - before).toBe(LIMIT);

      const fresh = await fetch(`${gateway.url}/v2/models/simple/infer`, { method: 'POST', body: simpleBody(7), headers: { authorization: `Bearer ${key}` } });
      expect(fresh.status).toBe(200);
    } finally {
      await gateway.close({ graceMs: 500 });
    }
    await nodeServesNewClient();
  });
});

describe('pipelined requests on one HTTP/1.1 connection to the gateway on the raw HTTP/1.1 reader', () => {
  it('are read one at a time: each is forwarded after the previous answer, all answered 200 in order, the connection kept', async () => {
    const key = 'tsk_pipelining-raw-secret';
    const gateway = await startGateway({
      config: loadGatewayConfig(
        JSON.stringify({
          maxPipelinedRequests: LIMIT,
          tenants: [{ id: 'p', tier: 'premium', keys: [{ id: 'p1', hash: await sha256Hex(key) }] }],
        }),
      ),
      redisUrl: null,
      nodes: [{ id: 'n1', grpc: node.grpcAddress, http: null }],
      port: 0,
      host: '127.0.0.1',
      httpRawReader: true,
      logger: silentLogger,
    });
    try {
      const before = await servedSleepy();
      const count = 8;
      const body = sleepyBody(200);
      const request =
        `POST /v2/models/sleepy/infer HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      const socket = connect(gateway.port, '127.0.0.1');
      try {
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.write(request.repeat(count));
        // While the first answers come, the node never holds more than one of them.
        const deadline = Date.now() + 30_000;
        while ((text.match(/HTTP\/1\.1 \d{3}/g)?.length ?? 0) < count && Date.now() < deadline) {
          expect((await servedSleepy()) - before).toBeLessThanOrEqual((text.match(/HTTP\/1\.1 \d{3}/g)?.length ?? 0) + 1);
          await sleep(50);
        }
        const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
        expect(statuses).toEqual(Array.from({ length: count }, () => 200));
        expect(socket.destroyed).toBe(false);
        expect((await servedSleepy()) - before).toBe(count);
      } finally {
        socket.destroy();
      }
    } finally {
      await gateway.close({ graceMs: 500 });
    }
    await nodeServesNewClient();
  });
});
