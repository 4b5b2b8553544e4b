/**
 * Hostile HTTP/2 peers at the gateway's gRPC port on the raw HTTP/2 front (`grpcRawH2`): the cases that
 * matter at a public front door, each answered with the RFC 9113 code while a grpc-js client on another
 * connection is still served: an HPACK bomb, rapid reset, a CONTINUATION flood, a window that never
 * opens (the answer dropped, not held), and a connection that does not open with the preface. Then the
 * unary calls the port serves in place (not relayed to grpc-js): hostile messages, metadata and fields
 * answered with a status naming the problem by the in-place path itself.
 * The gateway in this process (a crash would end the run), our own frames byte by byte on loopback.
 */
import net from 'node:net';
import { create, fromBinary } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelStatisticsResponseSchema, ServerLiveRequestSchema, type ServerLiveResponse } from '../../shared/src/gen/grpc_service_pb.js';
import { Flag, FrameType, H2Error, HpackDecoder, Setting, encodeFrame, encodeHeaderBlock, pushInteger, settingsFrame } from '../../shared/src/http/raw-http2/index.js';
import { connectClient, dataFrame, goawayCode, headersFrame, isAnswerEnd, isGoaway, isRst } from '../../shared/src/http/raw-http2/test-client.js';
import { silentLogger } from '../../shared/src/logging/index.js';
import { createGrpcFront, type GrpcFront } from '../../gateway/src/adapters/grpc-front/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { sha256Hex } from '../../gateway/src/core/auth/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { frontClient, type FrontClient } from '../../gateway/test/grpc-front/front-client.js';
import { deadAddress } from '../../gateway/test/support/test-node-process.js';

const KEY = 'tsk_sec-grpc-raw-h2';
/** A call whose answer carries DATA: ServerLive with an empty request message (served in place). */
const SERVER_LIVE = {
  ':method': 'POST',
  ':scheme': 'http',
  ':path': '/inference.GRPCInferenceService/ServerLive',
  ':authority': 'gateway',
  'content-type': 'application/grpc',
  te: 'trailers',
  authorization: `Bearer ${KEY}`,
};
const EMPTY_MESSAGE = Buffer.from([0, 0, 0, 0, 0]);
const END = Flag.END_HEADERS | Flag.END_STREAM;
const rstCode = (payload: Buffer): number => payload.readUInt32BE(0);

let gateway: RunningGateway;
let client: FrontClient;
let port: number;

beforeAll(async () => {
  const config = loadGatewayConfig(
    JSON.stringify({ grpcRawH2: true, tenants: [{ id: 'a', tier: 'standard', keys: [{ id: 'a1', hash: await sha256Hex(KEY) }] }] }),
  );
  gateway = await startGateway({ config, redisUrl: null, nodes: [{ id: 'dead', grpc: await deadAddress(), http: null }], port: 0, grpcPort: 0, host: '127.0.0.1', logger: silentLogger });
  port = gateway.grpcPort!;
  client = frontClient(gateway.grpcTarget!);
}, 30_000);

afterAll(async () => {
  client?.close();
  await gateway?.close({ graceMs: 200 });
});

async function expectGoaway(frames: Buffer[], code: number): Promise<void> {
  const peer = await connectClient(port);
  peer.send(...frames);
  expect(goawayCode(await peer.waitFor(isGoaway))).toBe(code);
  await peer.closed;
}

/** The honest client on its own connection is still answered. */
async function expectServed(): Promise<void> {
  const live = await client.unary<ServerLiveResponse>('serverLive', create(ServerLiveRequestSchema), { key: KEY });
  expect(live.error).toBeUndefined();
  expect(live.response?.live).toBe(true);
}

describe("the gateway's gRPC port on the raw HTTP/2 front, hostile peers", () => {
  it('answers a plain ServerLive (the baseline the cases below depart from)', async () => {
    const peer = await connectClient(port);
    peer.send(headersFrame(1, SERVER_LIVE), dataFrame(1, EMPTY_MESSAGE, Flag.END_STREAM));
    const end = await peer.waitFor(isAnswerEnd(1));
    expect(end.type).toBe(FrameType.HEADERS); // trailers
    expect(peer.frames.some((f) => f.type === FrameType.DATA && f.streamId === 1 && f.payload.length > 0)).toBe(true);
    peer.destroy();
    await expectServed();
  });

  it('resets a stream whose header list decodes past the limit (HPACK bomb) and serves the next one', async () => {
    // One 3,000-byte field into the table, then referenced 30 times: ~94 KB decoded from a 3 KB block.
    const bomb: number[] = [0x40];
    pushInteger(bomb, 0, 7, 5);
    bomb.push(...Buffer.from('x-big'));
    pushInteger(bomb, 0, 7, 3000);
    bomb.push(...Buffer.alloc(3000, 0x61));
    for (let i = 0; i < 30; i++) bomb.push(0x80 | 62);
    const peer = await connectClient(port);
    peer.send(encodeFrame(FrameType.HEADERS, END, 1, Buffer.concat([encodeHeaderBlock(SERVER_LIVE), Buffer.from(bomb)])));
    expect(rstCode((await peer.waitFor(isRst(1))).payload)).toBe(H2Error.ENHANCE_YOUR_CALM);
    peer.send(headersFrame(3, SERVER_LIVE), dataFrame(3, EMPTY_MESSAGE, Flag.END_STREAM));
    await peer.waitFor(isAnswerEnd(3));
    peer.destroy();
    await expectServed();
  });

  it('ends rapid reset (HEADERS then RST_STREAM, over and over) with ENHANCE_YOUR_CALM', async () => {
    const frames: Buffer[] = [];
    for (let i = 0; i < 3000; i++) frames.push(headersFrame(2 * i + 1, SERVER_LIVE), encodeFrame(FrameType.RST_STREAM, 0, 2 * i + 1, Buffer.from([0, 0, 0, H2Error.CANCEL])));
    await expectGoaway(frames, H2Error.ENHANCE_YOUR_CALM);
    await expectServed();
  });

  it('ends a CONTINUATION flood with ENHANCE_YOUR_CALM, large or empty frames alike', async () => {
    const large = Array.from({ length: 100 }, () => encodeFrame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(1000, 0x80 | 2)));
    await expectGoaway([headersFrame(1, SERVER_LIVE, 0), ...large], H2Error.ENHANCE_YOUR_CALM);
    const empty = Array.from({ length: 10_000 }, () => encodeFrame(FrameType.CONTINUATION, 0, 1, Buffer.alloc(0)));
    await expectGoaway([headersFrame(1, SERVER_LIVE, 0), ...empty], H2Error.ENHANCE_YOUR_CALM);
    await expectServed();
  });

  it('drops an answer whose window never opens (RST_STREAM CANCEL), holding nothing for the peer', async () => {
    const stalled: GrpcFront = createGrpcFront(gateway.app, { rawH2: true, rawH2Limits: { sendStallMs: 200 }, logger: silentLogger });
    const { port: stalledPort } = await stalled.listen(0, '127.0.0.1');
    try {
      const peer = await connectClient(stalledPort, [[Setting.INITIAL_WINDOW_SIZE, 0]]);
      peer.send(headersFrame(1, SERVER_LIVE), dataFrame(1, EMPTY_MESSAGE, Flag.END_STREAM));
      expect(rstCode((await peer.waitFor(isRst(1))).payload)).toBe(H2Error.CANCEL);
      expect(peer.frames.some((f) => f.type === FrameType.DATA && f.streamId === 1 && f.payload.length > 0)).toBe(false);
      // The connection goes on: a stream that is read is answered.
      peer.send(settingsFrame([[Setting.INITIAL_WINDOW_SIZE, 65_535]]), headersFrame(3, SERVER_LIVE), dataFrame(3, EMPTY_MESSAGE, Flag.END_STREAM));
      await peer.waitFor(isAnswerEnd(3));
      peer.destroy();
    } finally {
      await stalled.close(200);
    }
    await expectServed();
  });

  it('ends a connection that does not open with the client preface (an HTTP/1.1 request) with GOAWAY PROTOCOL_ERROR', async () => {
    const socket = net.connect(port, '127.0.0.1');
    const read: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => read.push(chunk));
    socket.on('error', () => {});
    socket.write('POST /inference.GRPCInferenceService/ServerLive HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n\0\0\0\0\0');
    await new Promise((resolve) => socket.on('close', resolve));
    const all = Buffer.concat(read);
    // Our SETTINGS, then GOAWAY PROTOCOL_ERROR; no answer to the request.
    const goaway = all.indexOf(Buffer.from([0, 0, 8, FrameType.GOAWAY]));
    expect(goaway).toBeGreaterThan(0);
    expect(all.readUInt32BE(goaway + 9 + 4)).toBe(H2Error.PROTOCOL_ERROR);
    await expectServed();
  });
});

/** One call on a fresh connection: its answer's grpc-status and grpc-message (trailers or trailers-only). */
async function rawUnary(fields: Record<string, string>, body: Buffer | undefined): Promise<{ status: string | undefined; message: string | undefined; data: Buffer }> {
  const peer = await connectClient(port);
  try {
    peer.send(body === undefined ? headersFrame(1, fields, END) : Buffer.concat([headersFrame(1, fields), dataFrame(1, body, Flag.END_STREAM)]));
    await peer.waitFor(isAnswerEnd(1));
    const decoder = new HpackDecoder(64 * 1024);
    const answered = new Map<string, string>();
    for (const frame of peer.frames) {
      if (frame.type !== FrameType.HEADERS) continue;
      for (const [name, value] of decoder.decode(frame.payload).fields) if (frame.streamId === 1) answered.set(name, value);
    }
    const data = Buffer.concat(peer.frames.filter((f) => f.type === FrameType.DATA && f.streamId === 1).map((f) => f.payload));
    return { status: answered.get('grpc-status'), message: answered.get('grpc-message'), data };
  } finally {
    peer.destroy();
  }
}

const call = (method: string, extra: Record<string, string> = {}): Record<string, string> => ({ ...SERVER_LIVE, ':path': `/inference.GRPCInferenceService/${method}`, ...extra });
const framed = (message: Buffer): Buffer => Buffer.concat([Buffer.from([0, 0, 0, 0, message.length]), message]);

describe("the gateway's raw gRPC port, unary calls served in place: hostile input", () => {
  it('answers an undecodable ModelMetadataRequest INVALID_ARGUMENT naming the message, in place', async () => {
    const relayed = gateway.grpcRelayedStreams();
    // Field 1 (name), length-delimited, claiming 100 bytes where 1 follows.
    const answer = await rawUnary(call('ModelMetadata'), framed(Buffer.from([0x0a, 100, 0x61])));
    expect(answer.status).toBe('3');
    expect(decodeURIComponent(answer.message ?? '')).toMatch(/malformed inference\.ModelMetadataRequest message/);
    expect(gateway.grpcRelayedStreams()).toBe(relayed);
    await expectServed();
  });

  it('leaves out metadata HTTP cannot carry (non-ASCII value, binary key) and still answers, in place', async () => {
    const relayed = gateway.grpcRelayedStreams();
    const answer = await rawUnary(call('ServerMetadata', { 'x-junk': '\u00ff\u0001', 'x-raw-bin': 'AAEC', 'x-tessera-deadline-ms': 'soon' }), framed(Buffer.alloc(0)));
    expect(answer.status).toBe('0');
    expect(gateway.grpcRelayedStreams()).toBe(relayed);
  });

  it('keeps a model name that is a path to itself: ModelStatistics of "../../repository/index" answers that model, not the index', async () => {
    const relayed = gateway.grpcRelayedStreams();
    const name = Buffer.from('../../repository/index');
    const answer = await rawUnary(call('ModelStatistics'), framed(Buffer.concat([Buffer.from([0x0a, name.length]), name])));
    expect(answer.status).toBe('0');
    const stats = fromBinary(ModelStatisticsResponseSchema, answer.data.subarray(5));
    expect(stats.modelStats.every((m) => m.name === name.toString())).toBe(true);
    expect(gateway.grpcRelayedStreams()).toBe(relayed);
  });

  it('answers a call whose grpc-timeout is already spent DEADLINE_EXCEEDED, in place', async () => {
    const relayed = gateway.grpcRelayedStreams();
    const answer = await rawUnary(call('ModelConfig', { 'grpc-timeout': '0n' }), framed(Buffer.alloc(0)));
    expect(answer.status).toBe('4');
    expect(gateway.grpcRelayedStreams()).toBe(relayed);
  });

  it('answers a call without its message (END_STREAM on the headers) with a status, and a client reset mid-call costs nothing', async () => {
    const relayed = gateway.grpcRelayedStreams();
    const empty = await rawUnary(call('ModelReady'), undefined);
    expect(empty.status).not.toBe('0');
    expect(empty.status).not.toBe('13');
    const peer = await connectClient(port);
    peer.send(headersFrame(1, call('RepositoryIndex')), encodeFrame(FrameType.RST_STREAM, 0, 1, Buffer.from([0, 0, 0, H2Error.CANCEL])));
    peer.send(headersFrame(3, SERVER_LIVE), dataFrame(3, EMPTY_MESSAGE, Flag.END_STREAM));
    await peer.waitFor(isAnswerEnd(3));
    peer.destroy();
    expect(gateway.grpcRelayedStreams()).toBe(relayed);
    await expectServed();
  });
});
