/**
 * A client that goes away in the middle of a miss cancels the gateway's upstream call: the node's
 * HTTP/2 stream is reset with CANCEL, over every front door (the HTTP fast path on node:http and on the
 * raw HTTP/1.1 reader, the gRPC front door's h2 fast path), on a no-store miss, whether the client
 * closes its connection or only its sending side (node:http ends such a request too); so does a gRPC
 * deadline that passes mid-miss. The guard
 * for any change to how the request's cancellation reaches the upstream call (issue 17, lead 1: an
 * AbortController per miss; the gRPC call's watch).
 *
 * The gateway is the real one (startGateway, embedded mode: no Redis). The node is a real node:http2
 * server on loopback that takes ModelInfer and never answers: a real node answers too fast to leave a
 * window, and only the server end of the stream can tell that it was reset and with which code.
 */
import { toBinary } from '@bufbuild/protobuf';
import { connect, constants, createServer, type ClientHttp2Session, type ClientHttp2Stream, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import { connect as connectTcp } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ModelInferRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { encodeInferRequestBody } from '../../shared/src/kserve/index.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { waitFor } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { simpleProto } from '../../gateway/test/grpc-front/front-client.js';

const KEY = 'tsk_client-gone-upstream';
const MODEL_INFER = '/inference.GRPCInferenceService/ModelInfer';

describe('a client gone mid-miss cancels the upstream stream (gateway + an HTTP/2 node that never answers)', () => {
  let node: Http2Server;
  let gateway: RunningGateway;
  /** The same gateway with the raw HTTP/1.1 reader (`httpRawReader`). */
  let rawGateway: RunningGateway;
  /** The ModelInfer streams the node took, with the code each was closed with once closed. */
  let calls: { stream: ServerHttp2Stream; rstCode: number | undefined }[] = [];

  beforeAll(async () => {
    node = createServer();
    node.on('stream', (stream, headers) => {
      if (headers[':path'] !== MODEL_INFER) {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '12' }));
        stream.end();
        return;
      }
      const call: (typeof calls)[number] = { stream, rstCode: undefined };
      calls.push(call);
      stream.on('close', () => (call.rstCode = stream.rstCode));
      stream.resume();
    });
    await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
    const nodePort = (node.address() as AddressInfo).port;
    const config = loadGatewayConfig(
      JSON.stringify({ tiers: { standard: { queueTimeoutMs: 20_000 } }, tenants: [{ id: 'tg', tier: 'standard', keys: [{ id: 'tg1', hash: await sha256Hex(KEY) }] }] }),
    );
    gateway = await startGateway({ config, redisUrl: null, nodes: [{ id: 'silent', grpc: `127.0.0.1:${nodePort}`, http: null }], port: 0, grpcPort: 0, host: '127.0.0.1', httpRawReader: false, logger: silentLogger });
    rawGateway = await startGateway({ config, redisUrl: null, nodes: [{ id: 'silent', grpc: `127.0.0.1:${nodePort}`, http: null }], port: 0, host: '127.0.0.1', httpRawReader: true, logger: silentLogger });
  }, 30_000);

  beforeEach(() => {
    calls = [];
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 500 });
    await rawGateway?.close({ graceMs: 500 });
    for (const call of calls) call.stream.destroy();
    await new Promise<void>((resolve) => (node === undefined ? resolve() : node.close(() => resolve())));
  });

  it.each([
    ['node:http', 'closes its connection', false, 'destroy'],
    ['node:http', 'ends its sending side', false, 'end'],
    ['the raw reader', 'closes its connection', true, 'destroy'],
    ['the raw reader', 'ends its sending side', true, 'end'],
  ] as const)('HTTP on %s: the client %s, the node sees RST_STREAM CANCEL', async (_door, _how, raw, leave) => {
    const socket = connectTcp((raw ? rawGateway : gateway).port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(noStoreHttpRequest());
    await waitFor(() => calls.length === 1, { what: 'the miss to reach the node' });
    expect(calls[0]!.rstCode).toBeUndefined();
    if (raw) expect(rawGateway.rawHttp1?.size).toBe(1); // the raw reader, not node:http, holds the request
    if (leave === 'destroy') socket.destroy();
    else socket.end();
    await waitFor(() => calls[0]!.rstCode !== undefined, { what: 'the node to see its stream reset' });
    expect(calls[0]!.rstCode).toBe(constants.NGHTTP2_CANCEL);
    socket.destroy();
  });

  it('gRPC: the client resets its call, the node sees RST_STREAM CANCEL', async () => {
    const session = connect(`http://${gateway.grpcTarget!}`);
    try {
      // With grpc-timeout: the front door's h2 fast path takes the call.
      const call = startNoStoreCall(session, 0, '20S');
      await waitFor(() => calls.length === 1, { what: 'the miss to reach the node' });
      expect(calls[0]!.rstCode).toBeUndefined();
      call.close(constants.NGHTTP2_CANCEL);
      await waitFor(() => calls[0]!.rstCode !== undefined, { what: 'the node to see its stream reset' });
      expect(calls[0]!.rstCode).toBe(constants.NGHTTP2_CANCEL);
    } finally {
      session.close();
    }
  });

  it('gRPC: the deadline passes mid-miss, the client gets DEADLINE_EXCEEDED and the node sees RST_STREAM CANCEL', async () => {
    const session = connect(`http://${gateway.grpcTarget!}`);
    try {
      // Long enough for the miss to reach the node first on a busy box; the node never answers.
      const call = startNoStoreCall(session, 1, '3S');
      const status = new Promise<string | undefined>((resolve) => {
        let headersStatus: string | undefined;
        call.on('response', (headers) => (headersStatus = headers['grpc-status'] as string | undefined));
        call.on('trailers', (trailers) => resolve((trailers['grpc-status'] as string | undefined) ?? headersStatus));
        call.on('close', () => resolve(headersStatus));
      });
      call.resume();
      await waitFor(() => calls.length === 1, { what: 'the miss to reach the node' });
      expect(await status).toBe(String(4)); // DEADLINE_EXCEEDED
      await waitFor(() => calls[0]!.rstCode !== undefined, { what: 'the node to see its stream reset' });
      expect(calls[0]!.rstCode).toBe(constants.NGHTTP2_CANCEL);
    } finally {
      session.close();
    }
  });
});

/** A no-store ModelInfer of `simple` over the gRPC front door, its request sent whole. */
function startNoStoreCall(session: ClientHttp2Session, offset: number, grpcTimeout: string): ClientHttp2Stream {
  const message = toBinary(ModelInferRequestSchema, simpleProto(offset));
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  const call = session.request({
    ':method': 'POST',
    ':path': MODEL_INFER,
    'content-type': 'application/grpc',
    te: 'trailers',
    'grpc-timeout': grpcTimeout,
    authorization: `Bearer ${KEY}`,
    'cache-control': 'no-store',
  });
  call.on('error', () => undefined);
  call.end(frame);
  return call;
}

/** A no-store binary infer of `simple` over HTTP/1.1, as bytes. */
function noStoreHttpRequest(): Buffer {
  const encoded = encodeInferRequestBody(
    { id: '', modelName: 'simple', inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Uint8Array(64) }, { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: new Uint8Array(64) }], parameters: {} },
    { binaryInputs: true, binaryDataOutput: true },
  );
  const head = [
    'POST /v2/models/simple/infer HTTP/1.1',
    'host: gateway',
    `authorization: Bearer ${KEY}`,
    'cache-control: no-store',
    ...Object.entries(encoded.headers).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${encoded.body.length}`,
    '',
    '',
  ].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(encoded.body)]);
}
