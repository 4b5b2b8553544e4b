/**
 * The gRPC front door's h2 fast path hands its call's `watch` to the upstream call, not an AbortSignal
 * (issue 17: an AbortController per miss), and that watch still tells the dispatcher when the client
 * resets the call or its `grpc-timeout` passes. Real node:http2 server and client; the dispatcher is a
 * fake that never answers and records what it was given (a real node answers too fast to leave a window).
 */
import { toBinary } from '@bufbuild/protobuf';
import { connect, constants, createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TesseraError } from '../../../shared/src/errors/index.js';
import { ModelInferRequestSchema } from '../../../shared/src/gen/grpc_service_pb.js';
import { frameGrpcMessage } from '../../../shared/src/grpc/index.js';
import { silentLogger } from '../../../shared/src/logging/index.js';
import { createMemoryRateLimiter, createMemoryTenantStore } from '../../src/adapters/memory/index.js';
import { frontInferFastPath } from '../../src/adapters/grpc-front/h2-front-infer.js';
import { createGatewayApp } from '../../src/core/app/index.js';
import { seedTenants } from '../../src/core/auth/index.js';
import { RecordingMetrics } from '../app-fixtures.js';
import { unlimitedTenantConfig, WaitingDispatcher } from '../support/waiting-dispatcher.js';
import { simpleProto } from './front-client.js';

const KEY = 'tsk_h2-front-cancel';
const MODEL_INFER = '/inference.GRPCInferenceService/ModelInfer';

let server: Http2Server;
let port: number;
const dispatcher = new WaitingDispatcher();

beforeAll(async () => {
  const config = await unlimitedTenantConfig(KEY);
  const tenants = createMemoryTenantStore();
  await seedTenants(tenants, config.tenants, 0);
  const app = createGatewayApp({ config, tenants, rateLimiter: createMemoryRateLimiter({}), dispatcher, metrics: new RecordingMetrics(), logger: silentLogger });
  const take = frontInferFastPath(app.serveInfer, { maxReceiveBytes: 1 << 20, maxSendBytes: 1 << 20, logger: silentLogger });
  server = createServer();
  server.on('stream', (stream, headers) => {
    if (!take(stream, headers)) stream.close(constants.NGHTTP2_REFUSED_STREAM);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
});

/** Sends one ModelInfer, waits until the dispatcher has it; the caller ends it (reset or deadline). */
async function sendMiss(timeout: string, offset: number) {
  const calls = dispatcher.calls.length;
  const session = connect(`http://127.0.0.1:${port}`);
  const stream = session.request({ ':method': 'POST', ':path': MODEL_INFER, 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': timeout, authorization: `Bearer ${KEY}` });
  stream.on('error', () => undefined);
  const status = new Promise<string | undefined>((resolve) => {
    stream.on('response', (headers) => resolve(headers['grpc-status'] as string | undefined));
    stream.on('close', () => resolve(undefined));
  });
  stream.resume();
  stream.end(frameGrpcMessage(toBinary(ModelInferRequestSchema, simpleProto(offset))));
  while (dispatcher.calls.length === calls) await new Promise((resolve) => setTimeout(resolve, 5));
  return { session, stream, status, call: dispatcher.calls[calls]! };
}

describe('the gRPC h2 fast path cancels the upstream call through its watch', () => {
  it('the client resets the call: the dispatcher was given no AbortSignal and hears CANCELLED', async () => {
    const { session, stream, call } = await sendMiss('60S', 1);
    expect(call.signal).toBeDefined();
    expect(call.signal instanceof AbortSignal).toBe(false);
    stream.close(constants.NGHTTP2_CANCEL);
    const reason = await call.aborted;
    expect((reason as TesseraError).code).toBe('CANCELLED');
    expect(call.signal!.aborted).toBe(true);
    session.close();
  });

  it('the grpc-timeout passes: the dispatcher hears DEADLINE_EXCEEDED and the client gets it', async () => {
    // Long enough to reach the dispatcher first on a busy box; nothing answers, so the deadline ends it.
    const { session, status, call } = await sendMiss('2S', 2);
    expect(call.signal instanceof AbortSignal).toBe(false);
    const reason = await call.aborted;
    expect((reason as TesseraError).code).toBe('DEADLINE_EXCEEDED');
    expect(await status).toBe('4');
    session.close();
  });
});
