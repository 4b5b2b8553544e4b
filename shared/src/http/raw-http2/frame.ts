/**
 * HTTP/2 frame layout and codes (RFC 9113 §4, §6, §7): the 9-byte frame head, the frame types and flags
 * the front reads, error codes and setting ids, and writers for the control frames it sends.
 */

export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const FRAME_HEAD_BYTES = 9;
/** SETTINGS_MAX_FRAME_SIZE's floor, which we never raise: no frame either way is larger. */
export const MAX_FRAME_BYTES = 16_384;
/** The window every stream and the connection start with (RFC 9113 §6.9.2). */
export const DEFAULT_WINDOW = 65_535;
export const MAX_WINDOW = 2 ** 31 - 1;

export const FrameType = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const;

export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

export const H2Error = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  SETTINGS_TIMEOUT: 0x4,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  CONNECT_ERROR: 0xa,
  ENHANCE_YOUR_CALM: 0xb,
  INADEQUATE_SECURITY: 0xc,
  HTTP_1_1_REQUIRED: 0xd,
} as const;

export const Setting = {
  HEADER_TABLE_SIZE: 0x1,
  ENABLE_PUSH: 0x2,
  MAX_CONCURRENT_STREAMS: 0x3,
  INITIAL_WINDOW_SIZE: 0x4,
  MAX_FRAME_SIZE: 0x5,
  MAX_HEADER_LIST_SIZE: 0x6,
} as const;

/** Writes a frame head at `at` of `out`. */
export function writeFrameHead(out: Buffer, at: number, length: number, type: number, flags: number, streamId: number): void {
  out[at] = length >>> 16;
  out[at + 1] = (length >>> 8) & 0xff;
  out[at + 2] = length & 0xff;
  out[at + 3] = type;
  out[at + 4] = flags;
  out.writeUInt32BE(streamId, at + 5);
}

/** One whole frame in a new buffer. */
export function encodeFrame(type: number, flags: number, streamId: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(FRAME_HEAD_BYTES + payload.length);
  writeFrameHead(out, 0, payload.length, type, flags, streamId);
  out.set(payload, FRAME_HEAD_BYTES);
  return out;
}

export function settingsFrame(settings: ReadonlyArray<readonly [id: number, value: number]>): Buffer {
  const payload = Buffer.allocUnsafe(6 * settings.length);
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, 6 * i);
    payload.writeUInt32BE(value, 6 * i + 2);
  });
  return encodeFrame(FrameType.SETTINGS, 0, 0, payload);
}

export const SETTINGS_ACK = encodeFrame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(0));

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(increment, 0);
  return encodeFrame(FrameType.WINDOW_UPDATE, 0, streamId, payload);
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(4);
  payload.writeUInt32BE(code, 0);
  return encodeFrame(FrameType.RST_STREAM, 0, streamId, payload);
}

export function goawayFrame(lastStreamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(8);
  payload.writeUInt32BE(lastStreamId, 0);
  payload.writeUInt32BE(code, 4);
  return encodeFrame(FrameType.GOAWAY, 0, 0, payload);
}

/** The payload without its padding (RFC 9113 §6.1), or undefined when the pad length does not fit. */
export function unpadded(flags: number, payload: Buffer): Buffer | undefined {
  if ((flags & Flag.PADDED) === 0) return payload;
  if (payload.length < 1) return undefined;
  const pad = payload[0]!;
  if (pad >= payload.length) return undefined;
  return payload.subarray(1, payload.length - pad);
}
