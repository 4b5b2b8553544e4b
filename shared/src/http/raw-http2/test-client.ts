/**
 * Test-only: a raw HTTP/2 client on a plain socket that sends exactly the frames a test writes (hostile
 * ones included) and reads every frame back, and a front on loopback whose streams answer with a body of
 * a chosen size (or wait, when told to hold them).
 */
import net, { type AddressInfo } from 'node:net';
import { CLIENT_PREFACE, FRAME_HEAD_BYTES, Flag, FrameType, encodeFrame, settingsFrame } from './frame.js';
import { encodeHeaderBlock, type OutgoingFields } from './hpack-encoder.js';
import { createRawH2Front, type RawH2Front } from './front.js';
import type { RawH2Limits } from './connection.js';
import type { RawH2Stream } from './raw-stream.js';

export interface ReadFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

export interface TestClient {
  send(...frames: Buffer[]): void;
  /** Resolves with the first frame read (from the start) that `match` accepts; rejects when the socket closes first. */
  waitFor(match: (frame: ReadFrame) => boolean): Promise<ReadFrame>;
  readonly frames: ReadFrame[];
  /** Resolves when the server has closed the socket. */
  readonly closed: Promise<void>;
  destroy(): void;
}

export const REQUEST: OutgoingFields = { ':method': 'POST', ':scheme': 'http', ':path': '/echo', ':authority': 'test' };

export function headersFrame(streamId: number, fields: OutgoingFields = REQUEST, flags: number = Flag.END_HEADERS): Buffer {
  return encodeFrame(FrameType.HEADERS, flags, streamId, encodeHeaderBlock(fields));
}

export function dataFrame(streamId: number, payload: Uint8Array, flags: number = 0): Buffer {
  return encodeFrame(FrameType.DATA, flags, streamId, payload);
}

export function goawayCode(frame: ReadFrame): number {
  return frame.payload.readUInt32BE(4);
}

export const isGoaway = (frame: ReadFrame): boolean => frame.type === FrameType.GOAWAY;
export const isRst = (streamId: number) => (frame: ReadFrame): boolean => frame.type === FrameType.RST_STREAM && frame.streamId === streamId;
/** The END_STREAM frame of an answer on `streamId`. */
export const isAnswerEnd = (streamId: number) => (frame: ReadFrame): boolean =>
  frame.streamId === streamId && (frame.type === FrameType.HEADERS || frame.type === FrameType.DATA) && (frame.flags & Flag.END_STREAM) !== 0;

export async function connectClient(port: number, settings: ReadonlyArray<readonly [number, number]> = []): Promise<TestClient> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const frames: ReadFrame[] = [];
  const waiters: { match: (f: ReadFrame) => boolean; resolve: (f: ReadFrame) => void; reject: (e: Error) => void }[] = [];
  let pending = Buffer.alloc(0);
  let ended = false;
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= FRAME_HEAD_BYTES) {
      const length = pending.readUIntBE(0, 3);
      if (pending.length < FRAME_HEAD_BYTES + length) break;
      const frame = { type: pending[3]!, flags: pending[4]!, streamId: pending.readUInt32BE(5) & 0x7fffffff, payload: pending.subarray(9, 9 + length) };
      pending = pending.subarray(FRAME_HEAD_BYTES + length);
      frames.push(frame);
      for (const waiter of [...waiters]) {
        if (!waiter.match(frame)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(frame);
      }
    }
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      ended = true;
      for (const waiter of waiters.splice(0)) waiter.reject(new Error(`closed; frames read: ${frames.map((f) => f.type).join(',')}`));
      resolve();
    }),
  );
  socket.write(Buffer.concat([CLIENT_PREFACE, settingsFrame(settings)]));
  return {
    send: (...out) => void (socket.destroyed ? undefined : socket.write(Buffer.concat(out))),
    waitFor: (match) => {
      const seen = frames.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      if (ended) return Promise.reject(new Error('closed'));
      return new Promise((resolve, reject) => waiters.push({ match, resolve, reject }));
    },
    frames,
    closed,
    destroy: () => socket.destroy(),
  };
}

export interface TestFront {
  readonly port: number;
  /** Streams the front closed (or saw closed), by id, with their RST code (0: ended normally). */
  readonly closedStreams: Map<number, number>;
  /** Streams held open without an answer (`hold`). */
  readonly held: RawH2Stream[];
  close(): Promise<void>;
}

/** Answers each request, once its body has ended, with :status 200 and `answerBytes` of body; `hold`: never answers nor gives window back. */
export async function startTestFront(options: { answerBytes?: number; hold?: boolean; limits?: Partial<RawH2Limits> } = {}): Promise<TestFront> {
  const closedStreams = new Map<number, number>();
  const held: RawH2Stream[] = [];
  const front: RawH2Front = createRawH2Front(
    () => (stream) => {
      stream.on('close', () => closedStreams.set(stream.id, stream.rstCode));
      if (options.hold === true) {
        // Held streams read nothing: what the peer sends stays charged to its windows.
        stream.manualCredit = true;
        held.push(stream);
        return;
      }
      stream.on('end', () => {
        stream.respond({ ':status': 200, 'content-type': 'application/octet-stream' });
        stream.end(Buffer.alloc(options.answerBytes ?? 16, 7));
      });
    },
    options.limits,
  );
  await new Promise<void>((resolve) => front.server.listen(0, '127.0.0.1', resolve));
  return {
    port: (front.server.address() as AddressInfo).port,
    closedStreams,
    held,
    close: async () => {
      front.destroyAll();
      await new Promise<void>((resolve) => front.server.close(() => resolve()));
    },
  };
}
