import { constants, createServer as createHttp2Server, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FakeNodeCore, IDENTITY_MODEL } from '../../../../gpu-node/test/support/fake-node-core.js';
import { createGrpcServer, type GrpcServer } from '../../../../gpu-node/src/server/grpc/index.js';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import { ModelInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import type { InferRequest } from '../../../../shared/src/tensors/index.js';
import { GrpcStatusError, createGrpcInferClient } from './grpc-client.js';
import { frameGrpcMessage } from '../../../../shared/src/grpc/index.js';
import type { InferClient } from './infer-client.js';

const fp32 = (...values: number[]): Uint8Array => new Uint8Array(new Float32Array(values).buffer);
const floats = (data: Uint8Array): number[] => Array.from(new Float32Array(new Uint8Array(data).buffer));

const echoRequest = (id: string, ...values: number[]): InferRequest => ({
  id,
  modelName: IDENTITY_MODEL,
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, values.length], data: fp32(...values) }],
  parameters: {},
});

/** Settles `promise` and returns what it rejected with. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error as Error,
  );
}

describe('createGrpcInferClient against the node gRPC server', () => {
  const core = new FakeNodeCore();
  let server: GrpcServer;
  let client: InferClient;

  beforeAll(async () => {
    server = createGrpcServer(core);
    const { port } = await server.listen(0, '127.0.0.1');
    client = createGrpcInferClient('127.0.0.1', port, { 'X-Api-Key': 'k' });
  });
  afterAll(async () => {
    await client.close();
    await server.close(1000);
  });
  afterEach(() => {
    core.inferImpl = async (r) => core.echo(r);
  });

  it('round-trips raw tensors', async () => {
    const result = await client.infer(echoRequest('g1', 1, 2, 3, 4));
    expect(result.response).toMatchObject({ id: 'g1', modelName: IDENTITY_MODEL, modelVersion: '1' });
    expect(result.response.outputs[0]).toMatchObject({ name: 'INPUT0_OUT', datatype: 'FP32', shape: [1, 4] });
    expect(floats(result.response.outputs[0]!.data)).toEqual([1, 2, 3, 4]);
    expect(floats((core.callsOf('infer').at(-1)!.args[0] as InferRequest).inputs[0]!.data)).toEqual([1, 2, 3, 4]);
  });

  it('multiplexes concurrent calls, each getting its own answer', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => client.infer(echoRequest(`m${i}`, i))));
    expect(results.map((r) => [r.response.id, floats(r.response.outputs[0]!.data)[0]])).toEqual(
      Array.from({ length: 12 }, (_, i) => [`m${i}`, i]),
    );
  });

  it('rejects an error status (answered trailers-only) with its name and message', async () => {
    const error = await rejection(client.infer({ ...echoRequest('e1', 1), modelName: 'missing' }));
    expect(error).toBeInstanceOf(GrpcStatusError);
    expect(error.message).toBe("INVALID_ARGUMENT: Request for unknown model: 'missing' is not found");
    expect((error as GrpcStatusError).grpcStatus).toBe(3);
  });

  it('decodes a percent-encoded grpc-message', async () => {
    core.inferImpl = async () => {
      throw TesseraError.resourceExhausted('queue 100% full: é, 日本');
    };
    const error = await rejection(client.infer(echoRequest('e2', 1)));
    expect(error.message).toBe('RESOURCE_EXHAUSTED: queue 100% full: é, 日本');
  });
});

type Behaviour = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void;

/** A bare HTTP/2 server whose answer per call is chosen by the test, for the wire cases. */
describe('createGrpcInferClient on the wire', () => {
  let server: Http2Server;
  let port: number;
  let behaviour: Behaviour;
  let sessions = 0;
  /** The server side of the newest connection, to drop it under a call. */
  let lastSocket: Socket | undefined;
  const seen: IncomingHttpHeaders[] = [];
  const clients: InferClient[] = [];

  const client = (metadata: Record<string, string> = {}): InferClient => {
    const created = createGrpcInferClient('127.0.0.1', port, metadata);
    clients.push(created);
    return created;
  };

  const answer = (id: string): Buffer =>
    frameGrpcMessage(
      toBinary(
        ModelInferResponseSchema,
        create(ModelInferResponseSchema, {
          id,
          modelName: 'm',
          modelVersion: '2',
          outputs: [{ name: 'OUT', datatype: 'FP32', shape: [2n] }],
          rawOutputContents: [fp32(0.25, 4)],
        }),
      ),
    );

  /** A proper answer: headers, the message in two DATA frames, then trailers. */
  const ok: Behaviour = (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    const message = answer('wire');
    stream.write(message.subarray(0, 7));
    setImmediate(() => stream.end(message.subarray(7)));
  };

  beforeAll(async () => {
    server = createHttp2Server();
    server.on('session', () => (sessions += 1));
    server.on('connection', (socket: Socket) => (lastSocket = socket));
    server.on('stream', (stream, headers) => {
      seen.push(headers);
      stream.resume(); // the request body is not needed
      stream.on('error', () => undefined); // resets the tests provoke on purpose
      behaviour(stream, headers);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    behaviour = ok;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends a gRPC request with the metadata, and reads an answer split over DATA frames', async () => {
    behaviour = ok;
    const result = await client({ Authorization: 'Bearer k', 'x-tier': 'gold' }).infer(echoRequest('w1', 3));
    expect(result.response).toMatchObject({ id: 'wire', modelName: 'm', modelVersion: '2' });
    expect(floats(result.response.outputs[0]!.data)).toEqual([0.25, 4]);
    expect(seen.at(-1)).toMatchObject({
      ':method': 'POST',
      ':path': '/inference.GRPCInferenceService/ModelInfer',
      'content-type': 'application/grpc',
      te: 'trailers',
      authorization: 'Bearer k',
      'x-tier': 'gold',
    });
  });

  it('rejects a non-zero status sent in trailers after the headers', async () => {
    behaviour = (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '8', 'grpc-message': 'queue%20full' }));
      stream.end();
    };
    const error = await rejection(client().infer(echoRequest('t1', 1)));
    expect(error).toBeInstanceOf(GrpcStatusError);
    expect(error.message).toBe('RESOURCE_EXHAUSTED: queue full');
  });

  it('rejects a trailers-only answer with its status', async () => {
    behaviour = (stream) =>
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'missing API key' },
        { endStream: true },
      );
    const error = await rejection(client().infer(echoRequest('t2', 1)));
    expect(error.message).toBe('UNAUTHENTICATED: missing API key');
    expect((error as GrpcStatusError).grpcStatus).toBe(16);
  });

  it('rejects an HTTP error without a gRPC status', async () => {
    behaviour = (stream) => stream.respond({ ':status': 503 }, { endStream: true });
    const error = await rejection(client().infer(echoRequest('h1', 1)));
    expect(error.message).toBe(`ModelInfer to 127.0.0.1:${port} ended without a gRPC status: HTTP status 503`);
  });

  it('rejects an OK status without a message', async () => {
    behaviour = (stream) => stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '0' }, { endStream: true });
    const error = await rejection(client().infer(echoRequest('h2', 1)));
    expect(error.message).toBe(`ModelInfer to 127.0.0.1:${port}: the response carries no message`);
  });

  it('rejects the call in flight when the connection drops or is reset, and reconnects for the next', async () => {
    const before = sessions;
    const c = client();
    behaviour = () => lastSocket?.destroy();
    const dropped = await rejection(c.infer(echoRequest('d1', 1)));
    expect(dropped.message).toBe(`ModelInfer to 127.0.0.1:${port} ended without a gRPC status: the connection closed`);
    behaviour = () => lastSocket?.resetAndDestroy();
    const reset = await rejection(c.infer(echoRequest('d2', 1)));
    expect(reset.message).toMatch(new RegExp(`^ModelInfer to 127\\.0\\.0\\.1:${port} failed: read ECONNRESET`));
    behaviour = ok;
    expect((await c.infer(echoRequest('d3', 1))).response.id).toBe('wire');
    expect(sessions - before).toBe(3);
  });

  it('rejects the call in flight when the server closes the session without answering', async () => {
    behaviour = (stream) => stream.session?.destroy();
    const error = await rejection(client().infer(echoRequest('d4', 1)));
    expect(error.message).toBe(`ModelInfer to 127.0.0.1:${port} ended without a gRPC status: the server sent GOAWAY with code 0`);
  });

  it('completes a call accepted before a graceful GOAWAY, and opens a new session for the next', async () => {
    const before = sessions;
    behaviour = (stream, headers) => {
      stream.session?.goaway(constants.NGHTTP2_NO_ERROR);
      ok(stream, headers);
    };
    const c = client();
    expect((await c.infer(echoRequest('g1', 1))).response.id).toBe('wire');
    behaviour = ok;
    expect((await c.infer(echoRequest('g2', 1))).response.id).toBe('wire');
    expect(sessions - before).toBe(2);
  });

  it('rejects the calls in flight on a GOAWAY with an error code, and reconnects for the next', async () => {
    behaviour = (stream) => stream.session?.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
    const c = client();
    const errors = await Promise.all([rejection(c.infer(echoRequest('x1', 1))), rejection(c.infer(echoRequest('x2', 1)))]);
    for (const error of errors) {
      expect(error.message).toBe(`ModelInfer to 127.0.0.1:${port} failed: Session closed with error code 11; the server sent GOAWAY with code 11`);
    }
    behaviour = ok;
    expect((await c.infer(echoRequest('x3', 1))).response.id).toBe('wire');
  });

  it('encodes a request object once however often it is sent', async () => {
    const bodies: Buffer[] = [];
    behaviour = (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => bodies.push(Buffer.concat(chunks)));
      ok(stream, headers);
    };
    const base = echoRequest('same', 1, 2);
    let inputReads = 0;
    const request: InferRequest = {
      ...base,
      get inputs() {
        inputReads += 1;
        return base.inputs;
      },
    };
    const c = client();
    await c.infer(request);
    const reads = inputReads;
    await c.infer(request);
    expect(inputReads).toBe(reads);
    expect(bodies).toHaveLength(2);
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[0]!.readUInt32BE(1)).toBe(bodies[0]!.length - 5);
  });

  it('rejects when nothing listens', async () => {
    const closed = createNetServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const c = createGrpcInferClient('127.0.0.1', deadPort);
    clients.push(c);
    const error = await rejection(c.infer(echoRequest('r1', 1)));
    expect(error.message).toMatch(new RegExp(`^ModelInfer to 127\\.0\\.0\\.1:${deadPort} failed: .*connect ECONNREFUSED 127\\.0\\.0\\.1:${deadPort}`));
  });
});
