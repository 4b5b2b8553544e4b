/**
 * Hostile frames at the raw HTTP/2 front (shared/src/http/raw-http2, the node's `--grpc-raw-h2`): each is
 * answered with the RFC 9113 code (GOAWAY for connection errors, RST_STREAM for stream errors) and leaves
 * nothing behind: an HPACK bomb, a CONTINUATION flood, rapid reset, SETTINGS and PING floods, a window
 * that never opens, frames over the size limit, bad padding, stream ids reused or out of order, DATA on
 * closed and idle streams, streams past MAX_CONCURRENT_STREAMS, malformed requests and HPACK, and DATA
 * past the window. Real sockets on loopback, our own frames byte by byte.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GRPCInferenceService,
  ModelInferRequestSchema,
  ModelStreamInferResponseSchema,
  ServerLiveRequestSchema,
  type ModelStreamInferResponse,
} from '../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition, frameGrpcMessage } from '../../shared/src/grpc/index.js';
import { createGrpcServer, type GrpcServer } from '../../gpu-node/src/server/grpc/index.js';
import { MODEL_STREAM_INFER_PATH } from '../../gpu-node/src/server/grpc/stream-infer-in-place.js';
import { abortSignalOf } from '../../gpu-node/src/server-api/index.js';
import { FakeNodeCore, IDENTITY_MODEL } from '../../gpu-node/test/support/fake-node-core.js';
import {
  Flag,
  FrameType,
  H2Error,
  HpackDecoder,
  MAX_FRAME_BYTES,
  SETTINGS_ACK,
  Setting,
  encodeFrame,
  pushInteger,
  encodeHeaderBlock,
  windowUpdateFrame,
  rstStreamFrame,
} from '../../shared/src/http/raw-http2/index.js';
import {
  REQUEST,
  connectClient,
  dataFrame,
  goawayCode,
  headersFrame,
  isAnswerEnd,
  isGoaway,
  isRst,
  startTestFront,
  type ReadFrame,
  type TestClient,
  type TestFront,
} from '../../shared/src/http/raw-http2/test-client.js';

let front: TestFront;
beforeAll(async () => {
  front = await startTestFront();
});
afterAll(async () => {
  await front?.close();
});

const END = Flag.END_HEADERS | Flag.END_STREAM;
const rstCode = (payload: Buffer): number => payload.readUInt32BE(0);

async function expectGoaway(frames: Buffer[], code: number, port = front.port): Promise<void> {
  const client = await connectClient(port);
  client.send(...frames);
  const goaway = await client.waitFor(isGoaway);
  expect(goawayCode(goaway)).toBe(code);
  await client.closed;
}

describe('raw HTTP/2 front, hostile peers', () => {
  it('serves a plain request (the baseline the cases below depart from)', async () => {
    const client = await connectClient(front.port);
    client.send(headersFrame(1, REQUEST, END));
    const end = await client.waitFor(isAnswerEnd(1));
    expect(end.type).toBe(FrameType.DATA);
    client.destroy();
  });

  it('resets a stream whose header list decodes past the limit (HPACK bomb), keeping the table in step', async () => {
    // One 3,000-byte field added to the table, then referenced 30 times: 94 KB decoded from a 3 KB block.
    const bomb: number[] = [0x40];
    pushInteger(bomb, 0, 7, 5);
    bomb.push(...Buffer.from('x-big'));
    pushInteger(bomb, 0, 7, 3000);
    bomb.push(...Buffer.alloc(3000, 0x61));
    for (let i = 0; i < 30; i++) bomb.push(0x80 | 62);
    const client = await connectClient(front.port);
    client.send(encodeFrame(FrameType.HEADERS, END, 1, Buffer.concat([encodeHeaderBlock(REQUEST), Buffer.from(bomb)])));
    expect(rstCode((await client.waitFor(isRst(1))).payload)).toBe(H2Error.ENHANCE_YOUR_CALM);
    // The entry is in the table: one reference to it now is a request like any other.
    client.send(encodeFrame(FrameType.HEADERS, END, 3, Buffer.concat([encodeHeaderBlock(REQUEST), Buffer.from([0x80 | 62])])));
    await client.waitFor(isAnswerEnd(3));
    client.destroy();
  });

  it('ends a CONTINUATION flood with ENHANCE_YOUR_CALM, large or empty frames alike', async () => {
    const large = Array.from({ length: 100 }, () => encodeFrame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(1000, 0x80 | 2)));
    await expectGoaway([headersFrame(1, REQUEST, 0), ...large], H2Error.ENHANCE_YOUR_CALM);
    const empty = Array.from({ length: 10_000 }, () => encodeFrame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(0)));
    await expectGoaway([headersFrame(1, REQUEST, 0), ...empty], H2Error.ENHANCE_YOUR_CALM);
  });

  it('ends rapid reset (HEADERS then RST_STREAM, over and over) with ENHANCE_YOUR_CALM', async () => {
    const frames: Buffer[] = [];
    for (let i = 0; i < 3000; i++) frames.push(headersFrame(2 * i + 1), encodeFrame(FrameType.RST_STREAM, 0, 2 * i + 1, Buffer.from([0, 0, 0, H2Error.CANCEL])));
    await expectGoaway(frames, H2Error.ENHANCE_YOUR_CALM);
  });

  it('ends SETTINGS and PING floods with ENHANCE_YOUR_CALM', async () => {
    await expectGoaway(Array.from({ length: 5000 }, () => encodeFrame(FrameType.SETTINGS, 0, 0, Buffer.alloc(0))), H2Error.ENHANCE_YOUR_CALM);
    await expectGoaway(Array.from({ length: 5000 }, () => encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8))), H2Error.ENHANCE_YOUR_CALM);
  });

  it('drops an answer whose window never opens after sendStallMs, with RST_STREAM CANCEL', async () => {
    const stalled = await startTestFront({ answerBytes: 1000, limits: { sendStallMs: 200 } });
    try {
      const client = await connectClient(stalled.port, [[Setting.INITIAL_WINDOW_SIZE, 0]]);
      client.send(headersFrame(1, REQUEST, END));
      expect(rstCode((await client.waitFor(isRst(1))).payload)).toBe(H2Error.CANCEL);
      expect(stalled.closedStreams.get(1)).toBe(H2Error.CANCEL);
      expect(client.frames.some((f) => f.type === FrameType.DATA && f.streamId === 1 && f.payload.length > 0)).toBe(false);
      client.destroy();
    } finally {
      await stalled.close();
    }
  });

  it('ends a frame over 16 KiB with FRAME_SIZE_ERROR', async () => {
    await expectGoaway([headersFrame(1), dataFrame(1, Buffer.alloc(16_385))], H2Error.FRAME_SIZE_ERROR);
  });

  it('ends bad padding (pad length past the payload) with PROTOCOL_ERROR, on HEADERS and on DATA', async () => {
    await expectGoaway([encodeFrame(FrameType.HEADERS, END | Flag.PADDED, 1, Buffer.from([200, 0x82]))], H2Error.PROTOCOL_ERROR);
    await expectGoaway([headersFrame(1), dataFrame(1, Buffer.from([4, 1, 2, 3]), Flag.PADDED)], H2Error.PROTOCOL_ERROR);
  });

  it('ends a reused, out-of-order or even stream id with PROTOCOL_ERROR', async () => {
    const client = await connectClient(front.port);
    client.send(headersFrame(1, REQUEST, END));
    await client.waitFor(isAnswerEnd(1));
    client.send(headersFrame(1, REQUEST, END));
    expect(goawayCode(await client.waitFor(isGoaway))).toBe(H2Error.PROTOCOL_ERROR);
    await expectGoaway([headersFrame(5), headersFrame(3)], H2Error.PROTOCOL_ERROR);
    await expectGoaway([headersFrame(2)], H2Error.PROTOCOL_ERROR);
  });

  it('resets DATA on a closed stream with STREAM_CLOSED and keeps serving; DATA on an idle stream ends the connection', async () => {
    const client = await connectClient(front.port);
    client.send(headersFrame(1, REQUEST, END));
    await client.waitFor(isAnswerEnd(1));
    client.send(dataFrame(1, Buffer.from('late')));
    expect(rstCode((await client.waitFor(isRst(1))).payload)).toBe(H2Error.STREAM_CLOSED);
    client.send(headersFrame(3, REQUEST, END));
    await client.waitFor(isAnswerEnd(3));
    client.destroy();
    await expectGoaway([dataFrame(9, Buffer.from('idle'))], H2Error.PROTOCOL_ERROR);
  });

  it('refuses a stream past MAX_CONCURRENT_STREAMS with REFUSED_STREAM', async () => {
    const holding = await startTestFront({ hold: true, limits: { maxConcurrentStreams: 3 } });
    try {
      const client = await connectClient(holding.port);
      client.send(headersFrame(1), headersFrame(3), headersFrame(5), headersFrame(7));
      expect(rstCode((await client.waitFor(isRst(7))).payload)).toBe(H2Error.REFUSED_STREAM);
      expect(holding.held.map((s) => s.id)).toEqual([1, 3, 5]);
      // DATA the client sent before it read the refusal is ignored, not answered with a second RST (§5.1).
      client.send(dataFrame(7, Buffer.from('crossed')), headersFrame(9, REQUEST, END));
      expect(rstCode((await client.waitFor(isRst(9))).payload)).toBe(H2Error.REFUSED_STREAM);
      expect(client.frames.filter((f) => f.type === FrameType.RST_STREAM && f.streamId === 7)).toHaveLength(1);
      client.destroy();
    } finally {
      await holding.close();
    }
  });

  it('ends a connection that acknowledged MAX_CONCURRENT_STREAMS and still goes past it, with PROTOCOL_ERROR', async () => {
    const holding = await startTestFront({ hold: true, limits: { maxConcurrentStreams: 3 } });
    try {
      await expectGoaway([SETTINGS_ACK, headersFrame(1), headersFrame(3), headersFrame(5), headersFrame(7)], H2Error.PROTOCOL_ERROR, holding.port);
    } finally {
      await holding.close();
    }
  });

  it('resets malformed requests with PROTOCOL_ERROR: an upper-case name, a connection header, no :path, a NUL in a value', async () => {
    const client = await connectClient(front.port);
    const bad = [{ ...REQUEST, 'X-Upper': '1' }, { ...REQUEST, connection: 'keep-alive' }, { ':method': 'POST', ':scheme': 'http' }, { ...REQUEST, 'x-a': 'a\0b' }];
    bad.forEach((fields, i) => client.send(headersFrame(2 * i + 1, fields, END)));
    for (let i = 0; i < bad.length; i++) expect(rstCode((await client.waitFor(isRst(2 * i + 1))).payload)).toBe(H2Error.PROTOCOL_ERROR);
    client.send(headersFrame(9, REQUEST, END));
    await client.waitFor(isAnswerEnd(9));
    client.destroy();
  });

  it('ends malformed HPACK (an index past the table) with COMPRESSION_ERROR', async () => {
    await expectGoaway([encodeFrame(FrameType.HEADERS, END, 1, Buffer.from([0x82, 0x80 | 70]))], H2Error.COMPRESSION_ERROR);
  });

  it('ends DATA past the window it was given with FLOW_CONTROL_ERROR', async () => {
    const narrow = await startTestFront({ hold: true, limits: { windowBytes: 65_535 } });
    try {
      const data = Array.from({ length: 5 }, () => dataFrame(1, Buffer.alloc(16_384)));
      await expectGoaway([headersFrame(1), ...data], H2Error.FLOW_CONTROL_ERROR, narrow.port);
    } finally {
      await narrow.close();
    }
  });

  it('ends a connection that does not open with the client preface', async () => {
    const client = await connectClient(front.port);
    client.destroy();
    const net = await import('node:net');
    const socket = net.connect(front.port, '127.0.0.1');
    const read: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => read.push(chunk));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => socket.on('close', resolve));
    const all = Buffer.concat(read);
    // Our SETTINGS, then GOAWAY PROTOCOL_ERROR.
    const goaway = all.indexOf(Buffer.from([0, 0, 8, FrameType.GOAWAY]));
    expect(goaway).toBeGreaterThan(0);
    expect(all.readUInt32BE(goaway + 9 + 4)).toBe(H2Error.PROTOCOL_ERROR);
  });
});

describe('raw HTTP/2 front, slow and idle peers', () => {
  const net = import('node:net');
  /** A socket that sends `bytes` and nothing more; resolves with what the front sent once it closes the socket. */
  async function silentAfter(port: number, bytes: Buffer): Promise<Buffer> {
    const socket = (await net).connect(port, '127.0.0.1');
    const read: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => read.push(chunk));
    socket.on('error', () => {});
    socket.write(bytes);
    await new Promise((resolve) => socket.on('close', resolve));
    return Buffer.concat(read);
  }

  it('drops a connection whose preface or first SETTINGS does not come within prefaceTimeoutMs', async () => {
    const slow = await startTestFront({ limits: { prefaceTimeoutMs: 200, idleTimeoutMs: 0 } });
    try {
      // Half the preface; then the whole preface but no SETTINGS: each held a socket for ever before.
      await silentAfter(slow.port, Buffer.from('PRI * HTTP/2.0\r\n'));
      await silentAfter(slow.port, Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
      // A client that opens properly is not dropped by that timer: it is still served well after it.
      const client = await connectClient(slow.port);
      await new Promise((resolve) => setTimeout(resolve, 400));
      client.send(headersFrame(1, REQUEST, END));
      await client.waitFor(isAnswerEnd(1));
      client.destroy();
    } finally {
      await slow.close();
    }
  });

  it('ends a connection with no open stream for idleTimeoutMs with GOAWAY NO_ERROR, not one with a stream open', async () => {
    const idle = await startTestFront({ limits: { idleTimeoutMs: 300 } });
    try {
      const client = await connectClient(idle.port);
      client.send(headersFrame(1, REQUEST, END));
      await client.waitFor(isAnswerEnd(1));
      const goaway = await client.waitFor(isGoaway);
      expect(goawayCode(goaway)).toBe(H2Error.NO_ERROR);
      // The last stream it took is named, so the client knows stream 1 was served.
      expect(goaway.payload.readUInt32BE(0) & 0x7fffffff).toBe(1);
      await client.closed;
    } finally {
      await idle.close();
    }
    const busy = await startTestFront({ hold: true, limits: { idleTimeoutMs: 300 } });
    try {
      const client = await connectClient(busy.port);
      client.send(headersFrame(1, REQUEST, Flag.END_HEADERS));
      await new Promise((resolve) => setTimeout(resolve, 900));
      expect(client.frames.some((f) => f.type === FrameType.GOAWAY)).toBe(false);
      // Once its stream ends, the idle clock starts.
      busy.held[0]!.close(H2Error.CANCEL);
      expect(goawayCode(await client.waitFor(isGoaway))).toBe(H2Error.NO_ERROR);
      client.destroy();
    } finally {
      await busy.close();
    }
  });
});

describe("the node's gRPC port on the raw front (--grpc-raw-h2)", () => {
  it('ends a hostile connection with GOAWAY while a grpc-js client on another connection is served', async () => {
    const server = createGrpcServer(new FakeNodeCore(), { rawH2Front: true });
    const { port } = await server.listen(0, '127.0.0.1');
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    try {
      const frames: Buffer[] = [];
      for (let i = 0; i < 3000; i++) frames.push(headersFrame(2 * i + 1), encodeFrame(FrameType.RST_STREAM, 0, 2 * i + 1, Buffer.from([0, 0, 0, H2Error.CANCEL])));
      await expectGoaway(frames, H2Error.ENHANCE_YOUR_CALM, port);
      await expectGoaway([encodeFrame(FrameType.HEADERS, END, 1, Buffer.from([0x82, 0x80 | 70]))], H2Error.COMPRESSION_ERROR, port);
      const svc = clientServiceDefinition(GRPCInferenceService);
      expect((await callUnary(client, svc.serverLive, create(ServerLiveRequestSchema))).response.live).toBe(true);
    } finally {
      client.close();
      await server.close(1000);
    }
  });

  it("advertises the node's --grpc-max-concurrent-streams, not the front's default", async () => {
    const server = createGrpcServer(new FakeNodeCore(), { rawH2Front: true, maxConcurrentStreams: 4 });
    const { port } = await server.listen(0, '127.0.0.1');
    try {
      const client = await connectClient(port);
      const settings = await client.waitFor((f) => f.type === FrameType.SETTINGS && (f.flags & Flag.ACK) === 0);
      const values = new Map<number, number>();
      for (let at = 0; at < settings.payload.length; at += 6) values.set(settings.payload.readUInt16BE(at), settings.payload.readUInt32BE(at + 2));
      expect(values.get(Setting.MAX_CONCURRENT_STREAMS)).toBe(4);
      client.destroy();
    } finally {
      await server.close(1000);
    }
  });
});

describe("ModelStreamInfer in place on the node's raw front, hostile clients", () => {
  const STREAM = { ':method': 'POST', ':scheme': 'http', ':path': MODEL_STREAM_INFER_PATH, ':authority': 'test', 'content-type': 'application/grpc', te: 'trailers' };
  let core: FakeNodeCore;
  let server: GrpcServer;
  let port: number;

  beforeAll(async () => {
    core = new FakeNodeCore();
    server = createGrpcServer(core, { rawH2Front: true, maxInflightPerStream: 4 });
    ({ port } = await server.listen(0, '127.0.0.1'));
  });
  afterAll(async () => {
    await server?.close(1000);
  });

  /** One framed request for the identity model with `floats` FP32 values. */
  function request(floats: number, id = ''): Buffer {
    const raw = new Uint8Array(floats * 4);
    return frameGrpcMessage(toBinary(ModelInferRequestSchema, create(ModelInferRequestSchema, {
      modelName: IDENTITY_MODEL, id, inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1n, BigInt(floats)] }], rawInputContents: [raw],
    })));
  }

  /** `bytes` cut into DATA frames on `streamId`, the last one ending the stream when `end`. */
  function dataFrames(streamId: number, bytes: Buffer, end: boolean): Buffer[] {
    const frames: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += MAX_FRAME_BYTES) {
      const last = at + MAX_FRAME_BYTES >= bytes.length;
      frames.push(dataFrame(streamId, bytes.subarray(at, at + MAX_FRAME_BYTES), last && end ? Flag.END_STREAM : 0));
    }
    return frames;
  }

  /** The decoded fields of a header block frame (the node's encoder uses no dynamic table). */
  function fieldsOf(frame: ReadFrame): Map<string, string> {
    return new Map(new HpackDecoder(64 * 1024).decode(frame.payload).fields);
  }

  /** The stream's final header block (trailers, or a trailers-only answer). */
  async function statusOf(client: TestClient, streamId: number): Promise<Map<string, string>> {
    return fieldsOf(await client.waitFor((f) => f.type === FrameType.HEADERS && f.streamId === streamId && (f.flags & Flag.END_STREAM) !== 0));
  }

  /** The answers on `streamId` read so far, decoded. */
  function answersOf(client: TestClient, streamId: number): ModelStreamInferResponse[] {
    const body = Buffer.concat(client.frames.filter((f) => f.type === FrameType.DATA && f.streamId === streamId).map((f) => f.payload));
    const answers: ModelStreamInferResponse[] = [];
    for (let at = 0; at + 5 <= body.length; at += 5 + body.readUInt32BE(at + 1)) answers.push(fromBinary(ModelStreamInferResponseSchema, body.subarray(at + 5, at + 5 + body.readUInt32BE(at + 1))));
    return answers;
  }

  it('ends a stream whose client never reads with RESOURCE_EXHAUSTED once 8 MiB wait unsent, not buffering the rest', async () => {
    const relayedBefore = server.relayedStreams();
    // The client grants no stream window: every answer waits at the node.
    const client = await connectClient(port, [[Setting.INITIAL_WINDOW_SIZE, 0]]);
    const requests = Buffer.concat(Array.from({ length: 16 }, (_, i) => request(256 * 1024, String(i)))); // 16 x 1 MiB
    client.send(headersFrame(1, STREAM), ...dataFrames(1, requests, true));
    // The overflow aborts the stream's work: then the node has ended it.
    await expect.poll(() => core.inferCalls[0]?.signal?.aborted, { timeout: 20_000 }).toBe(true);
    // Then it reads: what the node held comes, then the status.
    client.send(windowUpdateFrame(1, 2 ** 31 - 1), windowUpdateFrame(0, 2 ** 30));
    const status = await statusOf(client, 1);
    expect(status.get('grpc-status')).toBe('8');
    expect(decodeURI(status.get('grpc-message') ?? '')).toMatch(/the client is not reading the stream/);
    const answers = answersOf(client, 1);
    expect(answers.length).toBeGreaterThanOrEqual(8);
    expect(answers.length).toBeLessThan(16);
    expect(server.relayedStreams()).toBe(relayedBefore);
    client.destroy();
  }, 30_000);

  it('answers a stream that ends inside a message with status OK and nothing else; one over the size limit at its prefix', async () => {
    const relayedBefore = server.relayedStreams();
    const client = await connectClient(port);
    const half = request(4).subarray(0, 12);
    client.send(headersFrame(1, STREAM), dataFrame(1, half, Flag.END_STREAM));
    const ended = await statusOf(client, 1);
    expect(ended.get('grpc-status')).toBe('0');
    expect(answersOf(client, 1)).toHaveLength(0);
    // A prefix declaring 4 GiB: refused at once, before any of its bytes.
    client.send(headersFrame(3, STREAM), dataFrame(3, Buffer.from([0, 0xff, 0xff, 0xff, 0xff])));
    const refused = await statusOf(client, 3);
    expect(refused.get('grpc-status')).toBe('8');
    expect(decodeURI(refused.get('grpc-message') ?? '')).toMatch(/Received message larger than max \(4294967295 vs 67108864\)/);
    // Half a message and then silence: the deadline ends it.
    client.send(headersFrame(5, { ...STREAM, 'grpc-timeout': '200m' }), dataFrame(5, half));
    expect((await statusOf(client, 5)).get('grpc-status')).toBe('4');
    expect(server.relayedStreams()).toBe(relayedBefore);
    client.destroy();
  });

  it('aborts the model when the client resets the stream mid-way, and the connection goes on', async () => {
    const relayedBefore = server.relayedStreams();
    let started!: () => void;
    const inferStarted = new Promise<void>((resolve) => (started = resolve));
    core.inferImpl = (_request, options) =>
      new Promise((_resolve, reject) => {
        started();
        abortSignalOf(options?.signal)?.addEventListener('abort', () => reject(options?.signal?.reason));
      });
    try {
      const client = await connectClient(port);
      client.send(headersFrame(1, STREAM), dataFrame(1, request(4, 'held')));
      await inferStarted;
      const signal = core.inferCalls.at(-1)?.signal;
      client.send(rstStreamFrame(1, H2Error.CANCEL));
      await expect.poll(() => signal?.aborted).toBe(true);
      core.inferImpl = (r) => Promise.resolve(core.echo(r));
      client.send(headersFrame(3, STREAM), dataFrame(3, request(4, 'next'), Flag.END_STREAM));
      expect((await statusOf(client, 3)).get('grpc-status')).toBe('0');
      expect(answersOf(client, 3).map((a) => a.inferResponse?.id)).toEqual(['next']);
      expect(server.relayedStreams()).toBe(relayedBefore);
      client.destroy();
    } finally {
      core.inferImpl = (r) => Promise.resolve(core.echo(r));
    }
  });

  it('answers thousands of tiny messages in order, withholding window credit while its in-flight limit is reached', async () => {
    const relayedBefore = server.relayedStreams();
    // Empty messages: each an in-band error (no model named), in order.
    const tiny = Buffer.alloc(5 * 2000);
    const client = await connectClient(port, [[Setting.INITIAL_WINDOW_SIZE, 2 ** 31 - 1]]);
    client.send(windowUpdateFrame(0, 2 ** 31 - 1 - 65_535), headersFrame(1, STREAM), ...dataFrames(1, tiny, true));
    expect((await statusOf(client, 1)).get('grpc-status')).toBe('0');
    const answers = answersOf(client, 1);
    expect(answers).toHaveLength(2000);
    expect(answers.every((a) => a.errorMessage !== '')).toBe(true);
    // Held answers keep the stream paused (4 in flight): 3 MiB sent past them, 5 in all, would have earned a WINDOW_UPDATE
    // for the stream (at half its 8 MiB window) had they been credited. None comes before a PING's ACK, which orders it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    core.inferImpl = async (r) => {
      await held;
      return core.echo(r);
    };
    try {
      const big = Buffer.concat(Array.from({ length: 10 }, (_, i) => request(128 * 1024, String(i)))); // 10 x 0.5 MiB
      client.send(headersFrame(3, STREAM), ...dataFrames(3, big, false), encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8)));
      await client.waitFor((f) => f.type === FrameType.PING && (f.flags & Flag.ACK) !== 0);
      const isStreamCredit = (f: ReadFrame): boolean => f.type === FrameType.WINDOW_UPDATE && f.streamId === 3;
      expect(client.frames.some(isStreamCredit)).toBe(false);
      release();
      await client.waitFor(isStreamCredit);
      client.send(dataFrame(3, Buffer.alloc(0), Flag.END_STREAM));
      expect((await statusOf(client, 3)).get('grpc-status')).toBe('0');
      expect(answersOf(client, 3).map((a) => a.inferResponse?.id)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    } finally {
      core.inferImpl = (r) => Promise.resolve(core.echo(r));
      client.destroy();
    }
    expect(server.relayedStreams()).toBe(relayedBefore);
  }, 30_000);
});
