/**
 * Issue 17, the gateway's gRPC upstream on our own HTTP/2 client (gateway/src/adapters/grpc/h2-node-connection.ts,
 * shared/src/http/raw-http2/client-connection.ts), its unary calls and its ModelStreamInfer calls alike.
 * A node is a stranger: bad frames, an HPACK bomb, an endless CONTINUATION, DATA before headers or past
 * the window, a window that never opens, GOAWAY mid-call, PUSH_PROMISE, HTTP/1.1 instead of HTTP/2 must
 * each fail the call with a status that names the problem (never a hang past the deadline, never a crash),
 * and the next call on a well-behaved node must get its own answer. Mid-stream (ModelStreamInfer): a window
 * that closes after the first answer, a reset, a message over the limit, half a message and then the end.
 *
 * The node is a real `net` server on loopback that reads the client's frames and answers each request
 * stream with the frames a case writes; the transport is the gateway's real one.
 */
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { create, toBinary } from '@bufbuild/protobuf';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TesseraError } from '../../shared/src/errors/index.js';
import { startFrameWritingNode, type Answer, type ClientFrame, type FrameWritingNode } from './support/frame-writing-node.js';
import { ModelInferResponseSchema, ModelStreamInferResponseSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { frameGrpcMessage } from '../../shared/src/grpc/index.js';
import {
  Flag,
  FrameType,
  H2Error,
  Setting,
  encodeFrame,
  encodeHeaderBlock,
  goawayFrame,
  pushInteger,
} from '../../shared/src/http/raw-http2/index.js';
import { createStaticNodeDirectory } from '../../gateway/src/adapters/fleet/index.js';
import { createH2Transport } from '../../gateway/src/adapters/grpc/h2-transport.js';
import type { GrpcTransport } from '../../gateway/src/adapters/grpc/grpc-node-transport.js';
import { DEFAULT_MAX_NODE_ANSWER_BYTES, type H2TransportOptions } from '../../gateway/src/adapters/grpc/h2-transport.js';
import type { InferResponse } from '../../shared/src/tensors/index.js';
import { simpleRequest } from '../../gateway/test/support/test-node-requests.js';

type Failure = TesseraError & { notAccepted?: boolean };

const headers = (streamId: number, fields: Record<string, string>, flags: number): Buffer =>
  encodeFrame(FrameType.HEADERS, flags | Flag.END_HEADERS, streamId, encodeHeaderBlock(fields));
const data = (streamId: number, payload: Uint8Array, flags = 0): Buffer => encodeFrame(FrameType.DATA, flags, streamId, payload);
const message = frameGrpcMessage(toBinary(ModelInferResponseSchema, create(ModelInferResponseSchema, { id: 'ok', modelName: 'simple', modelVersion: '1' })));

/** One ModelStreamInfer answer message (a response with id `id`), framed. */
const streamMessage = (id: string): Buffer =>
  frameGrpcMessage(toBinary(ModelStreamInferResponseSchema, create(ModelStreamInferResponseSchema, { inferResponse: { id, modelName: 'simple', modelVersion: '1' } })));
const answerHeaders = (id: number): Buffer => headers(id, { ':status': '200', 'content-type': 'application/grpc' }, 0);

/** The node's normal answer: headers, the message, trailers with status 0. */
const ok: Answer = (socket, id) => {
  socket.write(headers(id, { ':status': '200', 'content-type': 'application/grpc' }, 0));
  socket.write(data(id, message));
  socket.write(headers(id, { 'grpc-status': '0' }, Flag.END_STREAM));
};

describe('a hostile node behind the raw HTTP/2 gRPC upstream (the real transport + a loopback TCP node writing frames)', () => {
  let peer: FrameWritingNode;
  let address: string;
  let answer: Answer = ok;
  /** SETTINGS the node announces. */
  let settings: Array<readonly [number, number]> = [];
  /** What each connection's client sent, frame by frame. */
  const received: ClientFrame[] = [];
  const sockets: Socket[] = [];
  let transport: GrpcTransport;

  beforeAll(async () => {
    peer = await startFrameWritingNode({ answer: () => answer, settings: () => settings, received, sockets });
    address = peer.address;
  });

  afterEach(async () => {
    await transport?.close();
    for (const socket of sockets.splice(0)) socket.destroy();
    received.length = 0;
    answer = ok;
    settings = [];
  });

  afterAll(() => peer.close());

  const node = () => createStaticNodeDirectory([{ id: 'n', grpcAddress: address }]).all()[0]!;
  const start = (windowBytes?: number, options: H2TransportOptions = {}): GrpcTransport =>
    (transport = createH2Transport({ breaker: { volumeThreshold: 1000 }, backoff: { initialMs: 1, jitter: 0 }, ...(windowBytes ? { windowBytes } : {}), ...options }));

  /** A ModelStreamInfer call: the responses handed over, and how it ended. */
  async function streamed(deadlineMs = 10_000, request = simpleRequest(0)): Promise<{ ids: string[]; error: Failure | undefined }> {
    const ids: string[] = [];
    const error = await transport.streamInfer!(node(), request, { deadline: Date.now() + deadlineMs }, (response: InferResponse) => ids.push(response.id)).then(
      () => undefined,
      (e: unknown) => e as Failure,
    );
    return { ids, error };
  }

  async function failure(deadlineMs = 10_000): Promise<Failure> {
    try {
      await transport.infer(node(), simpleRequest(0), { deadline: Date.now() + deadlineMs });
    } catch (error) {
      return error as Failure;
    }
    throw new Error('expected a failure');
  }

  /** After the hostile answer, a well-behaved one on the same transport is read as usual. */
  async function nextCallServed(): Promise<void> {
    answer = ok;
    const result = await transport.infer(node(), simpleRequest(1), { deadline: Date.now() + 10_000 });
    expect(result.response.id).toBe('ok');
  }

  it('serves a well-behaved node (the harness itself)', async () => {
    start();
    await nextCallServed();
  });

  it('an HPACK bomb (a small block that decodes past the header list limit) resets the stream: INTERNAL naming it', async () => {
    start();
    answer = (socket, id) => {
      // One 4 KB field added to the dynamic table, then indexed 40 times: ~160 KB of list from ~4 KB of block.
      const block: number[] = [0x40];
      pushInteger(block, 0, 7, 1);
      block.push(0x78);
      pushInteger(block, 0, 7, 4000);
      for (let i = 0; i < 4000; i++) block.push(0x61);
      for (let i = 0; i < 40; i++) block.push(0x80 | 62);
      socket.write(encodeFrame(FrameType.HEADERS, Flag.END_HEADERS, id, Buffer.from(block)));
    };
    const error = await failure();
    expect(error).toMatchObject({ code: 'INTERNAL', notAccepted: false });
    expect(error.message).toMatch(/answer headers over 65536 bytes/);
    await expect.poll(() => received.some((f) => f.type === FrameType.RST_STREAM && f.payload.readUInt32BE(0) === H2Error.PROTOCOL_ERROR)).toBe(true);
    await nextCallServed();
  });

  it('an endless CONTINUATION ends the connection (ENHANCE_YOUR_CALM) once the block passes the limit', async () => {
    start();
    answer = (socket, id) => {
      socket.write(encodeFrame(FrameType.HEADERS, 0, id, encodeHeaderBlock({ ':status': '200' })));
      const filler = Buffer.alloc(8 * 1024, 0x80 | 8); // repeated ':status: 200' entries
      for (let i = 0; i < 20; i++) socket.write(encodeFrame(FrameType.CONTINUATION, 0, id, filler));
    };
    const error = await failure();
    expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: false });
    expect(error.message).toMatch(/CONTINUATION flood/);
    await expect.poll(() => received.some((f) => f.type === FrameType.GOAWAY && f.payload.readUInt32BE(4) === H2Error.ENHANCE_YOUR_CALM)).toBe(true);
    await nextCallServed();
  });

  it('DATA before the answer headers resets the stream: INTERNAL naming it', async () => {
    start();
    answer = (socket, id) => socket.write(data(id, message, Flag.END_STREAM));
    const error = await failure();
    expect(error).toMatchObject({ code: 'INTERNAL', notAccepted: false });
    expect(error.message).toMatch(/DATA before the answer headers/);
    await nextCallServed();
  });

  it('DATA beyond the stream window we announced resets the stream (FLOW_CONTROL_ERROR): INTERNAL naming it', async () => {
    start(10_000);
    answer = (socket, id) => {
      socket.write(headers(id, { ':status': '200', 'content-type': 'application/grpc' }, 0));
      socket.write(data(id, Buffer.alloc(16_000)));
    };
    const error = await failure();
    expect(error).toMatchObject({ code: 'INTERNAL', notAccepted: false });
    expect(error.message).toMatch(/DATA beyond the stream window/);
    await expect.poll(() => received.some((f) => f.type === FrameType.RST_STREAM && f.payload.readUInt32BE(0) === H2Error.FLOW_CONTROL_ERROR)).toBe(true);
    await nextCallServed();
  });

  it('a window that never opens holds the request only until the deadline: DEADLINE_EXCEEDED and RST_STREAM CANCEL', async () => {
    // The first call's bytes leave with the default window, before the node's SETTINGS; the second meets a window of 0.
    settings = [[Setting.INITIAL_WINDOW_SIZE, 0]];
    start();
    await nextCallServed();
    answer = () => undefined;
    const error = await failure(300);
    expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED', notAccepted: false });
    expect(received.some((f) => f.type === FrameType.DATA && f.streamId === 3)).toBe(false);
    await expect.poll(() => received.some((f) => f.type === FrameType.RST_STREAM && f.streamId === 3 && f.payload.readUInt32BE(0) === H2Error.CANCEL)).toBe(true);
  });

  it('GOAWAY mid-call below the stream: the call was never processed, fails as not accepted; the next call reconnects', async () => {
    start();
    answer = (socket) => socket.write(goawayFrame(0, H2Error.NO_ERROR));
    const error = await failure();
    expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
    expect(error.message).toMatch(/Stream refused by server/);
    await nextCallServed();
    expect(sockets.length).toBe(2);
  });

  it('GOAWAY naming the stream lets its answer finish on the closing connection', async () => {
    start();
    answer = (socket, id) => {
      socket.write(goawayFrame(id, H2Error.NO_ERROR));
      ok(socket, id);
    };
    const result = await transport.infer(node(), simpleRequest(0), { deadline: Date.now() + 10_000 });
    expect(result.response.id).toBe('ok');
  });

  it('PUSH_PROMISE (push is disabled) and frames on a stream never opened end the connection (PROTOCOL_ERROR)', async () => {
    start();
    answer = (socket, id) => socket.write(encodeFrame(FrameType.PUSH_PROMISE, Flag.END_HEADERS, id, Buffer.from([0, 0, 0, 2, 0x88])));
    expect((await failure()).message).toMatch(/PUSH_PROMISE with push disabled/);
    answer = (socket) => socket.write(headers(99, { ':status': '200' }, 0));
    expect((await failure()).message).toMatch(/HEADERS on stream 99, which we never opened/);
    await nextCallServed();
  });

  it('a node answering HTTP/1.1 never spoke HTTP/2: not accepted, and the node is backed off', async () => {
    const http1 = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => undefined);
      socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
    });
    await new Promise<void>((resolve) => http1.listen(0, '127.0.0.1', resolve));
    start();
    const view = createStaticNodeDirectory([{ id: 'h1', grpcAddress: `127.0.0.1:${(http1.address() as AddressInfo).port}` }]).all()[0]!;
    try {
      const error = await transport.infer(view, simpleRequest(0), { deadline: Date.now() + 10_000 }).then(
        () => undefined,
        (e: unknown) => e as Failure,
      );
      expect(error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: true });
      expect(error!.message).toMatch(/No connection established. Last error: the node broke the protocol: a frame of \d+ bytes/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => http1.close(() => resolve()));
    }
  });

  describe('mid-stream (ModelStreamInfer)', () => {
    it('runs on the same connection as unary calls: one connection per node', async () => {
      start();
      await nextCallServed();
      answer = (socket, id) => {
        socket.write(answerHeaders(id));
        socket.write(data(id, Buffer.concat([streamMessage('a'), streamMessage('b')])));
        socket.write(headers(id, { 'grpc-status': '0' }, Flag.END_STREAM));
      };
      expect(await streamed()).toEqual({ ids: ['a', 'b'], error: undefined });
      expect(sockets.length).toBe(1);
    });

    it('a node whose window closes after its first answer holds the request only until the deadline: the answer is handed over, then DEADLINE_EXCEEDED and RST_STREAM CANCEL', async () => {
      // As above: the first call's bytes leave with the default window; the stream's request meets a window of 0.
      settings = [[Setting.INITIAL_WINDOW_SIZE, 0]];
      start();
      await nextCallServed();
      answer = (socket, id) => {
        socket.write(answerHeaders(id));
        socket.write(data(id, streamMessage('first')));
      };
      const { ids, error } = await streamed(400);
      expect(ids).toEqual(['first']);
      expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED', notAccepted: false });
      expect(received.some((f) => f.type === FrameType.DATA && f.streamId === 3)).toBe(false);
      await expect.poll(() => received.some((f) => f.type === FrameType.RST_STREAM && f.streamId === 3 && f.payload.readUInt32BE(0) === H2Error.CANCEL)).toBe(true);
    });

    it('a reset mid-stream fails the call with the reset code after the answers already handed over; the next call is served', async () => {
      start();
      answer = (socket, id) => {
        socket.write(answerHeaders(id));
        socket.write(data(id, streamMessage('first')));
        socket.write(encodeFrame(FrameType.RST_STREAM, 0, id, Buffer.from([0, 0, 0, H2Error.INTERNAL_ERROR])));
      };
      const { ids, error } = await streamed();
      expect(ids).toEqual(['first']);
      expect(error).toMatchObject({ code: 'INTERNAL', notAccepted: false });
      expect(error!.message).toMatch(/RST_STREAM with code 2/);
      await nextCallServed();
      expect(sockets.length).toBe(1);
    });

    it('a message declared over the limit fails RESOURCE_EXHAUSTED before its bytes are held, and resets the stream', async () => {
      start(undefined, { maxReceiveMessageBytes: 1000 });
      await nextCallServed();
      answer = (socket, id) => {
        socket.write(answerHeaders(id));
        socket.write(data(id, streamMessage('first')));
        const prefix = Buffer.alloc(5);
        prefix.writeUInt32BE(50_000, 1);
        socket.write(data(id, Buffer.concat([prefix, Buffer.alloc(100)])));
      };
      const { ids, error } = await streamed();
      expect(ids).toEqual(['first']);
      expect(error).toMatchObject({ code: 'RESOURCE_EXHAUSTED', notAccepted: false });
      expect(error!.message).toMatch(/Received message larger than max \(50000 vs\. 1000\)/);
      await expect.poll(() => received.some((f) => f.type === FrameType.RST_STREAM && f.payload.readUInt32BE(0) === H2Error.CANCEL)).toBe(true);
      await nextCallServed();
      // The stream's reset cost the node's one connection nothing.
      expect(sockets.length).toBe(1);
    });

    it('with no limit configured, a node declaring a 4 GB message is refused at its prefix (the default bound), unary and streamed', async () => {
      start();
      await nextCallServed();
      const huge = (socket: Socket, id: number): void => {
        socket.write(answerHeaders(id));
        const prefix = Buffer.alloc(5);
        prefix.writeUInt32BE(0xffff_fff0, 1);
        socket.write(data(id, Buffer.concat([prefix, Buffer.alloc(100)])));
      };
      answer = huge;
      const unary = await failure();
      expect(unary).toMatchObject({ code: 'RESOURCE_EXHAUSTED' });
      expect(unary.message).toContain(String(DEFAULT_MAX_NODE_ANSWER_BYTES));
      answer = huge;
      const { error } = await streamed();
      expect(error).toMatchObject({ code: 'RESOURCE_EXHAUSTED', notAccepted: false });
      expect(error!.message).toMatch(/Received message larger than max \(4294967280 vs\. 268435456\)/);
      await nextCallServed();
    });

    it('half a message then the end: INTERNAL when the stream ends OK inside it, UNAVAILABLE when the connection drops inside it', async () => {
      start();
      await nextCallServed();
      const half = streamMessage('cut').subarray(0, 8);
      answer = (socket, id) => {
        socket.write(answerHeaders(id));
        socket.write(data(id, Buffer.concat([streamMessage('first'), half])));
        socket.write(headers(id, { 'grpc-status': '0' }, Flag.END_STREAM));
      };
      const ended = await streamed();
      expect(ended.ids).toEqual(['first']);
      expect(ended.error).toMatchObject({ code: 'INTERNAL', notAccepted: false });
      expect(ended.error!.message).toMatch(/the stream ended inside a message/);
      expect(sockets.length).toBe(1);

      answer = (socket, id) => {
        socket.write(answerHeaders(id));
        socket.write(data(id, half));
        socket.end();
      };
      const dropped = await streamed();
      expect(dropped.ids).toEqual([]);
      expect(dropped.error).toMatchObject({ code: 'UNAVAILABLE', notAccepted: false });
      expect(dropped.error!.message).toMatch(/Connection dropped/);
      await nextCallServed();
    });
  });
});
