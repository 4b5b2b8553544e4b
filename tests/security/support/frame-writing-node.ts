/**
 * A hostile node for the suites of the gateway's raw HTTP/2 upstreams: a real `net` server on loopback that
 * reads the client's frames after its preface, acknowledges its SETTINGS, and answers each request stream
 * with whatever the case's current `answer` writes. Every frame the client sent is kept for the case to read.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { CLIENT_PREFACE, FRAME_HEAD_BYTES, Flag, FrameType, encodeFrame, settingsFrame } from '../../../shared/src/http/raw-http2/index.js';

export type Answer = (socket: Socket, streamId: number) => void;

export interface ClientFrame {
  readonly type: number;
  readonly flags: number;
  readonly streamId: number;
  readonly payload: Buffer;
}

export interface FrameWritingNodeOptions {
  /** Read when a request's HEADERS arrive, so a case changes the answer by reassigning what this returns. */
  readonly answer: () => Answer;
  /** The SETTINGS the node announces, read when a connection opens. Default: none. */
  readonly settings?: () => Array<readonly [number, number]>;
  /** Filled with what every connection's client sent, frame by frame (the case's own array: it may empty it). */
  readonly received: ClientFrame[];
  /** Filled with every connection accepted (the case's own array: it may destroy and empty them). */
  readonly sockets: Socket[];
}

export interface FrameWritingNode {
  /** host:port on loopback. */
  readonly address: string;
  close(): Promise<void>;
}

export async function startFrameWritingNode(options: FrameWritingNodeOptions): Promise<FrameWritingNode> {
  const { answer, received, sockets } = options;
  const settings = options.settings ?? (() => []);
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.write(settingsFrame(settings()));
    let pending = Buffer.alloc(0);
    let prefaceRead = false;
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (!prefaceRead) {
        if (pending.length < CLIENT_PREFACE.length) return;
        prefaceRead = true;
        pending = pending.subarray(CLIENT_PREFACE.length);
      }
      while (pending.length >= FRAME_HEAD_BYTES) {
        const length = pending.readUIntBE(0, 3);
        if (pending.length < FRAME_HEAD_BYTES + length) break;
        const frame = { type: pending[3]!, flags: pending[4]!, streamId: pending.readUInt32BE(5) & 0x7fffffff, payload: pending.subarray(9, 9 + length) };
        pending = pending.subarray(FRAME_HEAD_BYTES + length);
        received.push(frame);
        if (frame.type === FrameType.SETTINGS && (frame.flags & Flag.ACK) === 0) socket.write(encodeFrame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(0)));
        if (frame.type === FrameType.HEADERS) answer()(socket, frame.streamId);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
