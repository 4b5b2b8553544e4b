/**
 * Hostile frames at the raw HTTP/2 front (shared/src/http/raw-http2, the node's `--grpc-raw-h2`): each is
 * answered with the RFC 9113 code (GOAWAY for connection errors, RST_STREAM for stream errors) and leaves
 * nothing behind: an HPACK bomb, a CONTINUATION flood, rapid reset, SETTINGS and PING floods, a window
 * that never opens, frames over the size limit, bad padding, stream ids reused or out of order, DATA on
 * closed and idle streams, streams past MAX_CONCURRENT_STREAMS, malformed requests and HPACK, and DATA
 * past the window. Real sockets on loopback, our own frames byte by byte.
 */
import { create } from '@bufbuild/protobuf';
import { Client, credentials } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPCInferenceService, ServerLiveRequestSchema } from '../../shared/src/gen/grpc_service_pb.js';
import { callUnary, clientServiceDefinition } from '../../shared/src/grpc/index.js';
import { createGrpcServer } from '../../gpu-node/src/server/grpc/index.js';
import { FakeNodeCore } from '../../gpu-node/test/support/fake-node-core.js';
import { Flag, FrameType, H2Error, SETTINGS_ACK, Setting, encodeFrame, pushInteger, encodeHeaderBlock } from '../../shared/src/http/raw-http2/index.js';
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
