/**
 * What the node:http2 transport adds to the transport contract (grpc-transport.test.ts): the wire cases against a bare HTTP/2 server on loopback whose answer the test chooses
 * (session reuse, request headers and parameters, trailers-only errors, GOAWAY, refused streams,
 * resets, hung nodes, keepalive, backoff, message limits), and a REAL node process that drains or is
 * killed under a call.
 */
import { connect as netConnect, createServer as createNetServer } from 'node:net';
import type { Server as NetServer, Socket } from 'node:net';
import { constants, createServer as createHttp2Server } from 'node:http2';
import type { Http2Server, IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TesseraError } from '../../../../shared/src/errors/index.js';
import { ModelInferRequestSchema, ModelInferResponseSchema } from '../../../../shared/src/gen/grpc_service_pb.js';
import { frameGrpcMessage, parametersFromProto, receivedResponseOf } from '../../../../shared/src/grpc/index.js';
import { waitFor } from '../../../../shared/test/support/index.js';
import type { NodeView } from '../../core/ports/index.js';
import { createStaticNodeDirectory } from '../fleet/index.js';
import { countsAgainstNode } from './grpc-errors.js';
import type { GrpcTransport } from './grpc-node-transport.js';
import { createH2Transport } from './h2-transport.js';
import type { H2TransportOptions } from './h2-transport.js';
import { deadAddress, startNodeProcess } from '../../../test/support/test-node-process.js';
import { simpleRequest, sleepyRequest } from '../../../test/support/test-node-requests.js';

type Failure = TesseraError & { notAccepted?: boolean; load?: { queued: number; inflight: number } };

async function failure(promise: Promise<unknown>): Promise<Failure> {
  try {
    await promise;
  } catch (error) {
    return error as Failure;
  }
  throw new Error('expected a failure');
}

const view = (id: string, address: string): NodeView => createStaticNodeDirectory([{ id, grpcAddress: address }]).all()[0]!;
const soon = (): number => Date.now() + 20_000;
const fp32 = (...values: number[]): Uint8Array => new Uint8Array(new Float32Array(values).buffer);

/** A ModelInfer answer message, framed. */
const answerMessage = (id: string): Buffer =>
  frameGrpcMessage(
    toBinary(
      ModelInferResponseSchema,
      create(ModelInferResponseSchema, {
        id,
        modelName: 'simple',
        modelVersion: '1',
        outputs: [{ name: 'OUT', datatype: 'FP32', shape: [1n, 2n] }],
        rawOutputContents: [fp32(0.25, 4)],
      }),
    ),
  );

type Behaviour = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, body: Buffer) => void;

/** Headers, the message, then trailers with the node's load (the node's normal answer). */
const ok: Behaviour = (stream, _headers, body) => {
  const request = fromBinary(ModelInferRequestSchema, body.subarray(5));
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'tessera-queue-depth': '3', 'tessera-inflight': '2' }));
  stream.end(answerMessage(request.id));
};

/** A trailers-only answer: the status in the response headers, no message. */
const trailersOnly =
  (status: number, message: string, extra: Record<string, string> = {}): Behaviour =>
  (stream) =>
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(status), 'grpc-message': encodeURIComponent(message), ...extra }, { endStream: true });

/** Never answers; records how the client ended the stream. */
const hang: Behaviour = () => undefined;

// node:http2's server on the other end: a peer this client did not write (h2-node-connection.ts is our own client).
describe('on our own HTTP/2 client', () => {
  describe('http2 transport on the wire', () => {
    let server: Http2Server;
    let address: string;
    let behaviour: Behaviour = ok;
    let sessions = 0;
    /** The server side of every connection, to drop them under a call. */
    const sockets: Socket[] = [];
    /** Per stream the server saw: its request headers and how it ended (the client's RST code). */
    const streams: { headers: IncomingHttpHeaders; body: Buffer; dataChunks: number; rstCode?: number }[] = [];
    const transports: GrpcTransport[] = [];

    const transport = (options: H2TransportOptions = {}): GrpcTransport => {
      const created = createH2Transport({ breaker: { volumeThreshold: 1000 }, ...options });
      transports.push(created);
      return created;
    };

    beforeAll(async () => {
      server = createHttp2Server();
      server.on('connection', (socket: Socket) => sockets.push(socket));
      server.on('session', (session) => {
        sessions++;
        session.on('error', () => undefined);
      });
      server.on('stream', (stream, headers) => {
        const record: (typeof streams)[number] = { headers, body: Buffer.alloc(0), dataChunks: 0 };
        streams.push(record);
        stream.on('error', () => undefined);
        stream.on('close', () => (record.rstCode = stream.rstCode));
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          record.dataChunks++;
        });
        stream.on('end', () => {
          record.body = Buffer.concat(chunks);
          behaviour(stream, headers, record.body);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    });

    afterEach(async () => {
      behaviour = ok;
      for (const t of transports.splice(0)) await t.close();
      for (const socket of sockets.splice(0)) socket.destroy();
      streams.length = 0;
      sessions = 0;
    });

    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('reuses one connection for sequential and concurrent calls', async () => {
      behaviour = ok;
      const t = transport();
      const node = view('n', address);
      for (let i = 0; i < 5; i++) expect((await t.infer(node, { ...simpleRequest(i), id: `s${i}` }, { deadline: soon() })).response.id).toBe(`s${i}`);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => t.infer(node, { ...simpleRequest(i), id: `c${i}` }, { deadline: soon() })));
      expect(results.map((r) => r.response.id)).toEqual(Array.from({ length: 20 }, (_, i) => `c${i}`));
      expect(results[0]!.load).toEqual({ queued: 3, inflight: 2 });
      expect(sessions).toBe(1);
      expect(streams).toHaveLength(25);
    });

    it("remembers the node's answer bytes for the decoded response, so a gRPC client can be sent them as received", async () => {
      behaviour = ok;
      const result = await transport().infer(view('n', address), { ...simpleRequest(1), id: 'b1' }, { deadline: soon() });
      const received = receivedResponseOf(result.response);
      expect(received === undefined ? undefined : Buffer.from(received)).toEqual(answerMessage('b1').subarray(5));
    });

    it('sends the deadline as grpc-timeout, the tier parameters and the trace context', async () => {
      behaviour = ok;
      const t = transport();
      const trace = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, traceState: 'k=v' };
      await t.infer(view('n', address), { ...simpleRequest(0), id: 'p', parameters: { priority: 99, keep: 'me' } }, { deadline: Date.now() + 5000, priority: 2, timeoutUs: 4_000_000, trace });
      const [seen] = streams;
      expect(seen!.headers).toMatchObject({
        ':method': 'POST',
        ':path': '/inference.GRPCInferenceService/ModelInfer',
        'content-type': 'application/grpc',
        te: 'trailers',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'k=v',
      });
      const timeoutMs = Number(/^(\d+)m$/.exec(String(seen!.headers['grpc-timeout']))?.[1]);
      expect(timeoutMs).toBeGreaterThan(0);
      expect(timeoutMs).toBeLessThanOrEqual(5000);
      const request = fromBinary(ModelInferRequestSchema, seen!.body.subarray(5));
      expect(parametersFromProto(request.parameters)).toEqual({ priority: 2, timeout: 4_000_000, keep: 'me' });
    });

    it('reads trailers-only errors with their decoded message and load, as answers of a working node', async () => {
      behaviour = trailersOnly(14, 'Exceeds maximum queue size: 100% full', { 'tessera-queue-depth': '9', 'tessera-inflight': '4' });
      const t = transport();
      const error = await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon() }));
      expect(error).toMatchObject({ code: 'UNAVAILABLE', message: 'Exceeds maximum queue size: 100% full', notAccepted: false, load: { queued: 9, inflight: 4 } });
      expect(countsAgainstNode(error)).toBe(false);
      behaviour = trailersOnly(5, "Request for unknown model: 'nope' is not found");
      expect(await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon() }))).toMatchObject({ code: 'NOT_FOUND', notAccepted: false });
      expect(t.breakers.state('n')).toBe('closed');
    });

    it('answers a status after headers (an error mid-answer) with the trailers it carried', async () => {
      behaviour = (stream) => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '13', 'grpc-message': 'boom', 'tessera-queue-depth': '0', 'tessera-inflight': '1' }));
        stream.end();
      };
      const error = await failure(transport().infer(view('n', address), simpleRequest(0), { deadline: soon() }));
      expect(error).toMatchObject({ code: 'INTERNAL', message: 'boom', notAccepted: false, load: { queued: 0, inflight: 1 } });
    });

    it("fails an OK status without a message, and an undecodable message as the node's fault", async () => {
      const t = transport();
      behaviour = (stream) => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end();
      };
      expect(await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon() }))).toMatchObject({ code: 'UNSUPPORTED', message: 'No message received' });
      behaviour = (stream) => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(frameGrpcMessage(Buffer.from([0xff, 0xff, 0xff])));
      };
      const garbled = await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon() }));
      expect(garbled.code).toBe('BAD_GATEWAY');
      expect(garbled.message).toMatch(/^node 'n' sent an answer the gateway cannot use: /);
      expect(countsAgainstNode(garbled)).toBe(true);
      // A well-formed message whose output contradicts its own shape (4 bytes for 1x2 FP32), with the
      // node's load trailer: still the node's fault, and still counted against it.
      behaviour = (stream) => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'tessera-queue-depth': '0', 'tessera-inflight': '1' }));
        const response = create(ModelInferResponseSchema, {
          modelName: 'simple',
          outputs: [{ name: 'OUT', datatype: 'FP32', shape: [1n, 2n] }],
          rawOutputContents: [fp32(0.25)],
        });
        stream.end(frameGrpcMessage(toBinary(ModelInferResponseSchema, response)));
      };
      const contradictory = await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon() }));
      expect(contradictory.code).toBe('BAD_GATEWAY');
      expect(contradictory.message).toMatch(/^node 'n' sent an answer the gateway cannot use: malformed ModelInferResponse .*OUT/);
      expect(countsAgainstNode(contradictory)).toBe(true);
    });

    it('maps a non-gRPC HTTP answer (a proxy in the way) by its HTTP status', async () => {
      behaviour = (stream) => stream.respond({ ':status': 503 }, { endStream: true });
      const error = await failure(transport().infer(view('n', address), simpleRequest(0), { deadline: soon() }));
      expect(error).toMatchObject({ code: 'UNAVAILABLE', message: 'Received HTTP status code 503', notAccepted: false });
    });

    it('enforces the deadline on a hung node: DEADLINE_EXCEEDED, a breaker failure, and the node sees CANCEL', async () => {
      behaviour = hang;
      // The node had a fair share of the deadline (>= DEFAULT_MIN_NODE_BUDGET_MS): its expiry is the node's.
      const error = await failure(transport().infer(view('n', address), simpleRequest(0), { deadline: Date.now() + 1100 }));
      expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED', notAccepted: false });
      expect(countsAgainstNode(error)).toBe(true);
      await waitFor(() => streams[0]?.rstCode !== undefined, { what: 'the node to see the reset' });
      expect(streams[0]!.rstCode).toBe(constants.NGHTTP2_CANCEL);
    });

    it("watches the calls' deadlines on one timer: calls arm no timer of their own, and a hung call still expires", async () => {
      const t = transport();
      const node = view('n', address);
      await t.infer(node, simpleRequest(0), { deadline: soon() }); // connects: the connect timer is not a call's
      const armed = vi.spyOn(globalThis, 'setTimeout');
      try {
        for (let i = 0; i < 10; i++) await t.infer(node, simpleRequest(i), { deadline: soon() });
        await Promise.all(Array.from({ length: 10 }, (_, i) => t.infer(node, simpleRequest(i), { deadline: soon() })));
        // At most the one shared timer, armed when no earlier deadline was waiting.
        expect(armed.mock.calls.length).toBeLessThanOrEqual(1);
      } finally {
        armed.mockRestore();
      }
      behaviour = hang;
      const error = await failure(t.infer(node, simpleRequest(0), { deadline: Date.now() + 1100 }));
      expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED', notAccepted: false });
    });

    it('a deadline that reaches the node nearly spent (used up in the gateway queue) is not held against it', async () => {
      behaviour = hang;
      const error = await failure(transport().infer(view('n', address), simpleRequest(0), { deadline: Date.now() + 150 }));
      expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED', excused: true });
      expect(countsAgainstNode(error)).toBe(false);
    });

    it('cancels: the caller gets CANCELLED at once, the node sees RST_STREAM CANCEL', async () => {
      behaviour = hang;
      const controller = new AbortController();
      const pending = failure(transport().infer(view('n', address), simpleRequest(0), { deadline: soon(), signal: controller.signal }));
      await waitFor(() => streams.length === 1, { what: 'the call to reach the node' });
      controller.abort();
      expect(await pending).toMatchObject({ code: 'CANCELLED', notAccepted: false });
      await waitFor(() => streams[0]?.rstCode !== undefined, { what: 'the node to see the reset' });
      expect(streams[0]!.rstCode).toBe(constants.NGHTTP2_CANCEL);
    });

    it("listens to the caller's signal only while the call runs, and fails at once on one already aborted", async () => {
      behaviour = ok;
      // A CancelSignal that records its listeners, as the front's call watch is (h2-unary-call.ts).
      const added: unknown[] = [];
      const removed: unknown[] = [];
      const watch = { aborted: false, addEventListener: (_t: 'abort', l: () => void) => void added.push(l), removeEventListener: (_t: 'abort', l: () => void) => void removed.push(l) };
      const t = transport();
      await t.infer(view('n', address), simpleRequest(0), { deadline: soon(), signal: watch });
      expect(added).toHaveLength(1);
      expect(removed).toEqual(added);
      const aborted = { ...watch, aborted: true };
      expect(await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon(), signal: aborted }))).toMatchObject({ code: 'CANCELLED' });
    });

    it('a graceful GOAWAY: calls the node took finish, calls above its last stream id fail as never accepted, the next call reconnects', async () => {
      const held: ServerHttp2Stream[] = [];
      behaviour = (stream) => {
        held.push(stream);
        if (held.length === 2) {
          // The node took the first call only (a draining server says so in its GOAWAY).
          stream.session!.goaway(constants.NGHTTP2_NO_ERROR, held[0]!.id);
          setTimeout(() => ok(held[0]!, {}, streams[0]!.body), 50);
        }
      };
      const t = transport();
      const node = view('n', address);
      const first = t.infer(node, { ...simpleRequest(0), id: 'first' }, { deadline: soon() });
      await waitFor(() => streams.length === 1, { what: 'the first call to arrive' });
      const second = failure(t.infer(node, { ...simpleRequest(1), id: 'second' }, { deadline: soon() }));
      expect((await first).response.id).toBe('first');
      const refused = await second;
      expect(refused).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
      expect(refused.message).toMatch(/node 'n' is unreachable: Stream refused by server/);
      behaviour = ok;
      expect((await t.infer(node, { ...simpleRequest(2), id: 'third' }, { deadline: soon() })).response.id).toBe('third');
      expect(sessions).toBe(2);
    });

    it('a GOAWAY with an error code fails calls the node may have run as accepted (no retry), and counts against it', async () => {
      behaviour = (stream) => stream.session!.goaway(constants.NGHTTP2_INTERNAL_ERROR, stream.id);
      const t = transport();
      const error = await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon() }));
      expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: false });
      expect(countsAgainstNode(error)).toBe(true);
    });

    it('a stream the node refuses (RST_STREAM REFUSED_STREAM) is not accepted; other resets are', async () => {
      const t = transport();
      behaviour = (stream) => stream.close(constants.NGHTTP2_REFUSED_STREAM);
      expect(await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon() }))).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
      behaviour = (stream) => stream.close(constants.NGHTTP2_INTERNAL_ERROR);
      expect(await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon() }))).toMatchObject({
        code: 'INTERNAL',
        message: 'Received RST_STREAM with code 2',
        notAccepted: false,
      });
    });

    it('a connection dropped mid-call fails it as accepted; the next call reconnects at once', async () => {
      behaviour = () => {
        for (const socket of sockets) socket.destroy();
      };
      const t = transport();
      const node = view('n', address);
      const error = await failure(t.infer(node, simpleRequest(0), { deadline: soon() }));
      expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: false });
      expect(error.message).toMatch(/^Connection dropped/);
      behaviour = ok;
      expect((await t.infer(node, { ...simpleRequest(1), id: 'again' }, { deadline: soon() })).response.id).toBe('again');
    });

    it('bounds answer and request sizes when asked to', async () => {
      behaviour = ok;
      const t = transport({ maxReceiveMessageBytes: 16, maxSendMessageBytes: 1 << 20 });
      expect(await failure(t.infer(view('n', address), simpleRequest(0), { deadline: soon() }))).toMatchObject({ code: 'RESOURCE_EXHAUSTED', notAccepted: false });
      const small = transport({ maxSendMessageBytes: 16 });
      expect(await failure(small.infer(view('m', address), simpleRequest(0), { deadline: soon() }))).toMatchObject({ code: 'RESOURCE_EXHAUSTED' });
      expect(streams).toHaveLength(1);
    });

    it("sends a request of several chunks (a gRPC client's, forwarded; a tensor sent as a view) as one DATA frame, in one piece", async () => {
      behaviour = ok;
      const request = { ...simpleRequest(0), id: 'fwd', inputs: [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 1024], data: new Uint8Array(4096).fill(3) }] };
      const wire = toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, { modelName: request.modelName, id: 'fwd', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, 1024n] }], rawInputContents: [request.inputs[0]!.data] }));
      const t = transport();
      // On a session already up (a fresh one holds the writes until the stream is ready).
      await t.infer(view('n', address), simpleRequest(0), { deadline: soon() });
      expect((await t.infer(view('n', address), { ...request, forwardable: wire }, { deadline: soon() })).response.id).toBe('fwd');
      // The node reads the client's bytes and the gateway's additions after them.
      const sent = fromBinary(ModelInferRequestSchema, streams[1]!.body.subarray(5));
      expect(Buffer.from(sent.rawInputContents[0]!).equals(request.inputs[0]!.data)).toBe(true);
      expect(sent.id).toBe('fwd');
      // Uncorked, the 5-byte prefix left alone and the rest after it: two DATA frames, two segments.
      expect(streams[1]!.dataChunks).toBe(1);
      // An HTTP client's 4 KB tensor goes as a view after the head (CORKED_VIEW_BYTES): one frame too, bytes exact.
      expect((await t.infer(view('n', address), { ...request, id: 'view' }, { deadline: soon() })).response.id).toBe('view');
      const viewed = fromBinary(ModelInferRequestSchema, streams[2]!.body.subarray(5));
      expect(Buffer.from(viewed.rawInputContents[0]!).equals(request.inputs[0]!.data)).toBe(true);
      expect(viewed.inputs[0]!.shape).toEqual([1n, 1024n]);
      expect(streams[2]!.dataChunks).toBe(1);
    });

    it('sends large requests without a size limit of its own', async () => {
      behaviour = ok;
      const big = { ...simpleRequest(0), id: 'big', inputs: [{ name: 'INPUT0', datatype: 'FP32' as const, shape: [1, 1 << 20], data: new Uint8Array(4 << 20) }] };
      expect((await transport().infer(view('n', address), big, { deadline: soon() })).response.id).toBe('big');
      expect(streams[0]!.body.length).toBeGreaterThan(4 << 20);
    });
  });

  describe('http2 transport: a node that allows few concurrent streams', () => {
    it('holds the calls beyond the limit in the client until a stream is free; all answer with their own result', async () => {
      const server = createHttp2Server({ settings: { maxConcurrentStreams: 2 } });
      let open = 0;
      let most = 0;
      let refused = 0;
      server.on('stream', (stream) => {
        open++;
        most = Math.max(most, open);
        stream.on('error', () => undefined);
        stream.on('close', () => {
          open--;
          if (stream.rstCode === constants.NGHTTP2_REFUSED_STREAM) refused++;
        });
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => setTimeout(() => ok(stream, {}, Buffer.concat(chunks)), 30));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const t = createH2Transport();
      try {
        const node = view('n', `127.0.0.1:${(server.address() as AddressInfo).port}`);
        // The first call learns the node's SETTINGS; the burst then meets the limit.
        await t.infer(node, { ...simpleRequest(0), id: 'first' }, { deadline: soon() });
        const results = await Promise.all(Array.from({ length: 7 }, (_, i) => t.infer(node, { ...simpleRequest(i), id: `b${i}` }, { deadline: soon() })));
        expect(results.map((r) => r.response.id)).toEqual(Array.from({ length: 7 }, (_, i) => `b${i}`));
        expect(most).toBe(2);
        expect(refused).toBe(0);
      } finally {
        await t.close();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  describe('http2 transport: connection failures', () => {
    it('backs off after a refused connect: calls fail at once as not accepted, then it connects again', async () => {
      const address = await deadAddress();
      const t = createH2Transport({ backoff: { initialMs: 300, jitter: 0 }, breaker: { volumeThreshold: 1000 } });
      let server: Http2Server | undefined;
      try {
        const node = view('n', address);
        const refused = await failure(t.infer(node, simpleRequest(0), { deadline: soon() }));
        expect(refused).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
        expect(refused.message).toMatch(/node 'n' is unreachable: No connection established\. Last error: connect ECONNREFUSED/);
        // The node comes up; a call within the backoff does not try it.
        server = createHttp2Server();
        let connections = 0;
        server.on('session', () => connections++);
        server.on('stream', (stream) => {
          stream.on('error', () => undefined);
          stream.resume();
          stream.on('end', () => ok(stream, {}, frameGrpcMessage(toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, { id: 'back' })))));
        });
        const [host, port] = address.split(':');
        await new Promise<void>((resolve) => server!.listen(Number(port), host, resolve));
        const early = await failure(t.infer(node, simpleRequest(0), { deadline: soon() }));
        expect(early).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
        expect(connections).toBe(0);
        let answered = false;
        await waitFor(
          async () => {
            answered = await t.infer(node, simpleRequest(0), { deadline: soon() }).then(
              (r) => r.response.id === 'back',
              () => false,
            );
            return answered;
          },
          { what: 'the transport to reconnect after its backoff' },
        );
        expect(connections).toBe(1);
      } finally {
        await t.close();
        await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
      }
    });

    it('a connection closed before the node spoke HTTP/2 (a node dying as it accepts) never reached it', async () => {
      const accepted: Socket[] = [];
      const closing: NetServer = createNetServer((socket) => {
        accepted.push(socket);
        socket.on('error', () => undefined);
        socket.once('data', () => socket.resetAndDestroy());
      });
      await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
      const t = createH2Transport({ breaker: { volumeThreshold: 1000 } });
      try {
        const error = await failure(t.infer(view('n', `127.0.0.1:${(closing.address() as AddressInfo).port}`), simpleRequest(0), { deadline: soon() }));
        expect(accepted).toHaveLength(1);
        expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
        expect(error.message).toMatch(/No connection established/);
      } finally {
        await t.close();
        await new Promise<void>((resolve) => closing.close(() => resolve()));
      }
    });

    it('a node that accepts the connection but never speaks HTTP/2 fails the call as not accepted after the connect timeout', async () => {
      const silent: NetServer = createNetServer((socket) => socket.on('error', () => undefined));
      const sockets: Socket[] = [];
      silent.on('connection', (socket: Socket) => sockets.push(socket));
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      const t = createH2Transport({ connectTimeoutMs: 200, breaker: { volumeThreshold: 1000 } });
      try {
        const error = await failure(t.infer(view('n', `127.0.0.1:${(silent.address() as AddressInfo).port}`), simpleRequest(0), { deadline: soon() }));
        expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
        expect(error.message).toMatch(/connect timed out after 200 ms/);
      } finally {
        await t.close();
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => silent.close(() => resolve()));
      }
    });

    it('drops a connection whose keepalive pings go unanswered, failing its calls before their deadline', async () => {
      // A TCP relay to a real HTTP/2 server that stops relaying (a silent network partition).
      const target = createHttp2Server();
      let streamSeen = false;
      target.on('stream', (stream) => {
        streamSeen = true;
        stream.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
      const targetPort = (target.address() as AddressInfo).port;
      const relaySockets: Socket[] = [];
      let silent = false;
      const relay: NetServer = createNetServer((client) => {
        const upstream = netConnect(targetPort, '127.0.0.1');
        relaySockets.push(client, upstream);
        client.on('data', (chunk) => silent || upstream.write(chunk));
        upstream.on('data', (chunk) => silent || client.write(chunk));
        client.on('error', () => undefined);
        upstream.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
      const t = createH2Transport({ keepaliveTimeMs: 50, keepaliveTimeoutMs: 100 });
      try {
        const node = view('n', `127.0.0.1:${(relay.address() as AddressInfo).port}`);
        const pending = failure(t.infer(node, simpleRequest(0), { deadline: Date.now() + 60_000 }));
        // Silent once the node has the call: before that, a busy box can cut the link mid-handshake (never sent).
        await waitFor(() => streamSeen, { what: 'the node to see the call' });
        silent = true;
        const error = await pending;
        expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: false });
        expect(error.message).toMatch(/keepalive ping not answered/);
      } finally {
        await t.close();
        for (const socket of relaySockets) socket.destroy();
        await new Promise<void>((resolve) => relay.close(() => resolve()));
        await new Promise<void>((resolve) => target.close(() => resolve()));
      }
    });
  });

  describe('http2 transport against a real node that stops', () => {
    it('a node draining (SIGTERM) finishes the call it holds; later calls are not accepted', async () => {
      const node = await startNodeProcess();
      const t = createH2Transport({ breaker: { volumeThreshold: 1000 } });
      try {
        const live = view('live', node.grpcAddress);
        await t.infer(live, simpleRequest(0), { deadline: soon() });
        const held = t.infer(live, sleepyRequest(1500), { deadline: soon() });
        // A call sent after it on the same connection answered: the node has read the held call (not a guessed sleep).
        await t.infer(live, simpleRequest(1), { deadline: soon() });
        node.process.kill('SIGTERM');
        const result = await held;
        expect(result.response.modelName).toBe('sleepy');
        await new Promise<void>((resolve) => (node.process.exitCode === null ? node.process.once('exit', () => resolve()) : resolve()));
        const after = await failure(t.infer(live, simpleRequest(0), { deadline: soon() }));
        expect(after).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
      } finally {
        await t.close();
        await node.stop();
      }
    }, 120_000);

    it('a node killed under a call: the call fails as accepted and counts against it; the next is not accepted', async () => {
      const node = await startNodeProcess();
      const t = createH2Transport({ breaker: { volumeThreshold: 1000 } });
      try {
        const live = view('live', node.grpcAddress);
        await t.infer(live, simpleRequest(0), { deadline: soon() });
        const held = failure(t.infer(live, sleepyRequest(5000), { deadline: soon() }));
        await t.infer(live, simpleRequest(1), { deadline: soon() });
        node.process.kill('SIGKILL');
        const error = await held;
        expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: false });
        expect(countsAgainstNode(error)).toBe(true);
        const next = await failure(t.infer(live, simpleRequest(0), { deadline: soon() }));
        expect(next).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
      } finally {
        await t.close();
        await node.stop();
      }
    }, 120_000);
  });
});
