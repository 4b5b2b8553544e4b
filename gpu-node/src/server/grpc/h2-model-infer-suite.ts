/**
 * The ModelInfer fast path against grpc-js itself: the same raw HTTP/2 request goes to a node server
 * with the fast path and to one without it (grpc-js serves everything), and the answers must carry
 * the same status, message bytes and load trailers. Raw HTTP/2, because grpc-js's client cannot send
 * the malformed framings checked here.
 */
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ModelInferRequestSchema, ModelInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import { decodeGrpcMessage, frameGrpcMessage, grpcMessageHeader, grpcMessagePrefix, takeStreamsAhead } from '../../../../shared/src/grpc/index.js';
import { FakeNodeCore, IDENTITY_MODEL } from '../../../test/support/fake-node-core.js';
import { MODEL_INFER_PATH } from './h2-model-infer.js';
import { createGrpcServer, type GrpcServer } from './index.js';
import { abortSignalOf } from '../../server-api/index.js';

/** The ModelInfer fast path against grpc-js's own handler; the fast node on grpc-js's port or on the raw HTTP/2 front. */
export function modelInferSuite(rawH2Front: boolean): void {
  const MAX_MESSAGE_BYTES = 64 * 1024;
  const core = new FakeNodeCore();
  core.load = { queued: 3, inflight: 1 };

  interface Node {
    server: GrpcServer;
    session: ClientHttp2Session;
  }
  let fast: Node;
  let plain: Node;

  async function start(modelInferFastPath: boolean): Promise<Node> {
    const server = createGrpcServer(core, { modelInferFastPath, maxMessageBytes: MAX_MESSAGE_BYTES, rawH2Front: rawH2Front && modelInferFastPath });
    const { port } = await server.listen(0, '127.0.0.1');
    return { server, session: connect(`http://127.0.0.1:${port}`) };
  }

  beforeAll(async () => {
    [fast, plain] = await Promise.all([start(true), start(false)]);
  });
  afterAll(async () => {
    for (const node of [fast, plain]) {
      node.session.close();
      await node.server.close(1000);
    }
  });
  afterEach(() => {
    core.calls.length = 0;
    core.inferImpl = (r) => Promise.resolve(core.echo(r));
  });

  interface Answer {
    readonly status: number;
    readonly message: string;
    readonly body: Buffer;
    /** Status-carrying headers: the trailers, or the headers of a trailers-only answer. */
    readonly trailers: IncomingHttpHeaders;
  }

  function call(node: Node, body: Buffer, extraHeaders: Record<string, string> = {}, path = MODEL_INFER_PATH): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const stream = node.session.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
        ...extraHeaders,
      });
      let headers: IncomingHttpHeaders = {};
      let trailers: IncomingHttpHeaders | undefined;
      const chunks: Buffer[] = [];
      stream.on('response', (h) => (headers = h));
      stream.on('trailers', (t) => (trailers = t));
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', reject);
      stream.on('close', () => {
        const statusHeaders = trailers ?? headers;
        resolve({
          status: Number(statusHeaders['grpc-status']),
          message: decodeGrpcMessage(statusHeaders['grpc-message']),
          body: Buffer.concat(chunks),
          trailers: statusHeaders,
        });
      });
      stream.end(body);
    });
  }

  /** Sends to both nodes; answers [fast, plain]. */
  const both = (body: Buffer, headers?: Record<string, string>): Promise<[Answer, Answer]> =>
    Promise.all([call(fast, body, headers), call(plain, body, headers)]);

  const request = (modelName = IDENTITY_MODEL): Buffer =>
    Buffer.from(
      toBinary(
        ModelInferRequestSchema,
        create(ModelInferRequestSchema, {
          modelName,
          id: 'r1',
          inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 4n] }],
          rawInputContents: [new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer)],
        }),
      ),
    );

  describe('ModelInfer fast path', () => {
    it('takes the streams of a bound grpc-js server (0 would mean grpc-js moved its servers)', async () => {
      const server = new Server();
      await new Promise<void>((resolve, reject) =>
        server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
      );
      try {
        expect(takeStreamsAhead(server, () => false)).toBe(1);
      } finally {
        server.forceShutdown();
      }
    });

    it('answers OK with the same message and load trailers as grpc-js', async () => {
      const [a, b] = await both(frameGrpcMessage(request()));
      expect(a.status).toBe(status.OK);
      expect(b.status).toBe(status.OK);
      expect(a.body).toEqual(b.body);
      const answer = fromBinary(ModelInferResponseSchema, a.body.subarray(5));
      expect(answer.id).toBe('r1');
      expect(answer.outputs.map((o) => o.name)).toEqual(['INPUT0_OUT']);
      expect(new Float32Array(new Uint8Array(answer.rawOutputContents[0]!).buffer)).toEqual(new Float32Array([1, 2, 3, 4]));
      for (const answerOf of [a, b]) {
        expect(answerOf.trailers['tessera-queue-depth']).toBe('3');
        expect(answerOf.trailers['tessera-inflight']).toBe('1');
      }
    });

    it('sends a large answer in full (prefix and message written apart)', async () => {
      const big = new Float32Array(12_000).map((_, i) => i);
      core.inferImpl = (r) =>
        Promise.resolve({ ...core.echo(r), outputs: [{ name: 'BIG', datatype: 'FP32', shape: [1, big.length], data: new Uint8Array(big.buffer) }] });
      const [a, b] = await both(frameGrpcMessage(request()));
      expect(a.status).toBe(status.OK);
      expect(a.body.length).toBeGreaterThan(48_000);
      expect(a.body).toEqual(b.body);
    });

    it.each([
      ['an unknown model', () => frameGrpcMessage(request('no_such_model')), status.INVALID_ARGUMENT],
      ['bytes that are no ModelInferRequest', () => frameGrpcMessage(Buffer.from([0xff, 0xff, 0xff])), status.INVALID_ARGUMENT],
      ['an empty body', () => Buffer.alloc(0), status.UNIMPLEMENTED],
      ['two messages', () => Buffer.concat([frameGrpcMessage(request()), frameGrpcMessage(request())]), status.UNIMPLEMENTED],
      ['a message over the receive limit', () => frameGrpcMessage(Buffer.alloc(MAX_MESSAGE_BYTES + 1)), status.RESOURCE_EXHAUSTED],
    ])('answers %s with the status grpc-js gives', async (_case, body, expected) => {
      const [a, b] = await both(body());
      expect(b.status).toBe(expected);
      expect(a.status).toBe(expected);
      expect(a.message).not.toBe('');
      expect(a.trailers['tessera-queue-depth']).toBeDefined();
    });

    it('answers a truncated message INTERNAL (grpc-js: UNIMPLEMENTED, no message); the infer never runs', async () => {
      const framed = frameGrpcMessage(request());
      for (const body of [framed.subarray(0, framed.length - 3), grpcMessagePrefix(10).subarray(0, 3)]) {
        const [a, b] = await both(body);
        expect(a.status).toBe(status.INTERNAL);
        expect(a.message).toMatch(/truncated|ends inside a message prefix/);
        expect(b.status).toBe(status.UNIMPLEMENTED);
      }
      expect(core.inferCalls).toHaveLength(0);
    });

    it('refuses a compressed-flagged message without grpc-encoding, as the gRPC spec asks (grpc-js reads it as plain)', async () => {
      const flagged = Buffer.from(frameGrpcMessage(request()));
      flagged[0] = 1;
      const a = await call(fast, flagged);
      expect(a.status).toBe(status.INTERNAL);
      expect(a.message).toContain('grpc-encoding');
      expect(core.inferCalls).toHaveLength(0);
    });

    it('answers DEADLINE_EXCEEDED when grpc-timeout passes, and aborts the work', async () => {
      core.inferImpl = (_r, options) => new Promise((_resolve, reject) => abortSignalOf(options?.signal)?.addEventListener('abort', () => reject(options?.signal?.reason as Error)));
      const [a, b] = await both(frameGrpcMessage(request()), { 'grpc-timeout': '50m' });
      expect(a.status).toBe(status.DEADLINE_EXCEEDED);
      expect(b.status).toBe(status.DEADLINE_EXCEEDED);
      expect(core.inferCalls.map((c) => c.signal?.aborted)).toEqual([true, true]);
    });

    it('leaves to grpc-js what it does not take: a timeout it cannot read, a compressed request, another method', async () => {
      const [badTimeout] = await both(frameGrpcMessage(request()), { 'grpc-timeout': 'soon' });
      expect(badTimeout.status).toBe(status.INTERNAL);
      expect(badTimeout.message).toContain('grpc-timeout');
      // A gzip-compressed request: the fast path does not decompress, grpc-js does and answers it.
      const zipped = gzipSync(request());
      const compressed = Buffer.concat([Buffer.from([1, 0, 0, 0, 0]), zipped]);
      compressed.writeUInt32BE(zipped.length, 1);
      const [gzip, gzipPlain] = await both(compressed, { 'grpc-encoding': 'gzip' });
      expect(gzip.status).toBe(status.OK);
      expect(gzip.body).toEqual(gzipPlain.body);
      const unknown = await call(fast, frameGrpcMessage(Buffer.alloc(0)), {}, '/inference.GRPCInferenceService/NoSuchMethod');
      expect(unknown.status).toBe(status.UNIMPLEMENTED);
    });

    it('aborts the core signal when the client resets the stream', async () => {
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      core.inferImpl = (_r, options) =>
        new Promise((_resolve, reject) => {
          started();
          abortSignalOf(options?.signal)?.addEventListener('abort', () => reject(options?.signal?.reason as Error));
        });
      const stream = fast.session.request({ ':method': 'POST', ':path': MODEL_INFER_PATH, 'content-type': 'application/grpc', te: 'trailers' });
      stream.on('error', () => undefined);
      stream.end(frameGrpcMessage(request()));
      await running;
      stream.close();
      await expect.poll(() => core.inferCalls[0]?.signal?.aborted).toBe(true);
      expect((core.inferCalls[0]!.signal!.reason as { code: string }).code).toBe('CANCELLED');
    });
  });

  describe('grpcMessageHeader', () => {
    it('percent-encodes as grpc-js does, and survives a lone surrogate in the text', () => {
      expect(grpcMessageHeader("model 'é' not found")).toBe("model%20'%C3%A9'%20not%20found");
      expect(decodeGrpcMessage(grpcMessageHeader('bad \uD800 name \u{1F600}'))).toBe('bad \uFFFD name \u{1F600}');
    });
  });
}
