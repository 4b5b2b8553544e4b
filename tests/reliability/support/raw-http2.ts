/**
 * A deliberately misbehaving HTTP/2 client for the stream-limit suite. Node's http2 client (and so
 * grpc-js) never opens more streams than the server's SETTINGS_MAX_CONCURRENT_STREAMS: nghttp2 holds
 * the extra ones on the client side. An abusive client does not, so this one writes frames itself.
 *
 * It speaks just enough HTTP/2 for that: the preface, SETTINGS and their ACK (only when told to),
 * HEADERS whose fields are HPACK literals (no Huffman coding, no dynamic table, names and values under
 * 127 bytes), DATA; it reads frame headers and records per stream what came back (response HEADERS,
 * DATA bytes, END_STREAM, RST_STREAM's error code) and the GOAWAY, if any. It never decodes the
 * server's header blocks: a stream that got DATA and then END_STREAM was answered with a message.
 */
import { connect, type Socket } from 'node:net';

const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7 } as const;
const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** RFC 9113 §7 error codes seen in these tests. */
export const H2_ERROR = { NO_ERROR: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2, REFUSED_STREAM: 7, ENHANCE_YOUR_CALM: 11 } as const;

export interface RawStream {
  headerFrames: number;
  dataBytes: number;
  ended: boolean;
  rstCode: number | undefined;
}

export interface RawHttp2Connection {
  /** Streams this client opened, by id. */
  readonly streams: ReadonlyMap<number, RawStream>;
  /** The server's GOAWAY, once received. */
  readonly goaway: { lastStreamId: number; errorCode: number } | undefined;
  /** True once the socket closed. */
  readonly closed: boolean;
  /** Resolves with the server's first SETTINGS frame's (identifier → value) pairs. */
  readonly serverSettings: Promise<Map<number, number>>;
  /** Acknowledges the server's SETTINGS: from then on the server holds this client to them. */
  ackSettings(): void;
  /** Opens `count` unary gRPC calls of `path` carrying `message`, all in one write; returns their stream ids. */
  openGrpcCalls(count: number, path: string, message: Uint8Array): number[];
  /** Whether every opened stream is finished (ended or reset) or the connection is gone. */
  settled(): boolean;
  destroy(): void;
}

function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId, 5);
  return Buffer.concat([header, payload]);
}

/** One HPACK "literal header field without indexing, new name" (RFC 7541 §6.2.2), short strings only. */
function literalField(name: string, value: string): Buffer {
  if (name.length > 126 || value.length > 126) throw new Error('raw-http2 encodes only short header fields');
  return Buffer.concat([Buffer.from([0, name.length]), Buffer.from(name, 'latin1'), Buffer.from([value.length]), Buffer.from(value, 'latin1')]);
}

/** Connects and sends the preface and an empty SETTINGS; does not acknowledge the server's. */
export async function connectRawHttp2(port: number, host = '127.0.0.1'): Promise<RawHttp2Connection> {
  const socket: Socket = connect(port, host);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.on('error', () => undefined); // a reset connection is an outcome here, read from `closed`
  socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0)]));

  const streams = new Map<number, RawStream>();
  let goaway: RawHttp2Connection['goaway'];
  let closed = false;
  let nextStreamId = 1;
  let buffered = Buffer.alloc(0);
  let onSettings: (settings: Map<number, number>) => void = () => undefined;
  const serverSettings = new Promise<Map<number, number>>((resolve) => (onSettings = resolve));

  socket.on('close', () => (closed = true));
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      const type = buffered[3]!;
      const flags = buffered[4]!;
      const streamId = buffered.readUInt32BE(5) & 0x7fffffff;
      const payload = buffered.subarray(9, 9 + length);
      buffered = buffered.subarray(9 + length);
      const stream = streams.get(streamId);
      if (type === FRAME.SETTINGS && (flags & FLAG.ACK) === 0) {
        const settings = new Map<number, number>();
        for (let at = 0; at + 6 <= payload.length; at += 6) settings.set(payload.readUInt16BE(at), payload.readUInt32BE(at + 2));
        onSettings(settings);
      } else if (type === FRAME.PING && (flags & FLAG.ACK) === 0) {
        socket.write(frame(FRAME.PING, FLAG.ACK, 0, Buffer.from(payload)));
      } else if (type === FRAME.GOAWAY) {
        goaway = { lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, errorCode: payload.readUInt32BE(4) };
      } else if (stream !== undefined) {
        if (type === FRAME.HEADERS) stream.headerFrames++;
        if (type === FRAME.DATA) stream.dataBytes += length;
        if (type === FRAME.RST_STREAM) stream.rstCode = payload.readUInt32BE(0);
        if ((type === FRAME.HEADERS || type === FRAME.DATA) && (flags & FLAG.END_STREAM) !== 0) stream.ended = true;
      }
    }
  });

  return {
    streams,
    get goaway() {
      return goaway;
    },
    get closed() {
      return closed;
    },
    serverSettings,
    ackSettings() {
      socket.write(frame(FRAME.SETTINGS, FLAG.ACK, 0));
    },
    openGrpcCalls(count, path, message) {
      // gRPC's length-prefixed message: no compression, 4-byte big-endian length.
      const body = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), Buffer.from(message)]);
      body.writeUInt32BE(message.length, 1);
      const fields = Buffer.concat([
        literalField(':method', 'POST'),
        literalField(':scheme', 'http'),
        literalField(':path', path),
        literalField(':authority', `${host}:${port}`),
        literalField('content-type', 'application/grpc'),
        literalField('te', 'trailers'),
      ]);
      const ids: number[] = [];
      const frames: Buffer[] = [];
      for (let i = 0; i < count; i++) {
        const id = nextStreamId;
        nextStreamId += 2;
        ids.push(id);
        streams.set(id, { headerFrames: 0, dataBytes: 0, ended: false, rstCode: undefined });
        frames.push(frame(FRAME.HEADERS, FLAG.END_HEADERS, id, fields), frame(FRAME.DATA, FLAG.END_STREAM, id, body));
      }
      socket.write(Buffer.concat(frames));
      return ids;
    },
    settled() {
      return closed || [...streams.values()].every((s) => s.ended || s.rstCode !== undefined);
    },
    destroy() {
      socket.destroy();
    },
  };
}
