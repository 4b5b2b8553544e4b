/**
 * One HTTP/2 connection of the raw front (RFC 9113), server side: the preface and SETTINGS, frames read
 * from the socket, header blocks decoded (hpack-decoder.ts) and checked (request-headers.ts), streams
 * opened and closed by the state machine of §5.1, flow control both ways, PING, RST_STREAM, GOAWAY. Each
 * new request stream goes to `onStream`; its answers come back through the stream (raw-stream.ts).
 *
 * Hostile peers: frames over 16 KiB, bad padding, even or reused stream ids, DATA on idle streams, frames
 * that break the window, and malformed HPACK end the connection with GOAWAY and the RFC's code; a header
 * list over the limit, a malformed request, a stream past MAX_CONCURRENT_STREAMS before our SETTINGS are
 * acknowledged or DATA on a closed stream reset that stream; a stream past the limit once the peer has
 * acknowledged it ends the connection (PROTOCOL_ERROR). A header block larger than the list limit (a CONTINUATION flood) and PING,
 * SETTINGS or RST_STREAM faster than `RateBudget` allows (floods, rapid reset) end it with
 * ENHANCE_YOUR_CALM. Output waiting for a window that does not open for `sendStallMs` is dropped with
 * RST_STREAM CANCEL, so a peer cannot hold answers in memory by never reading. A connection that has not
 * sent its preface and SETTINGS within `prefaceTimeoutMs` is dropped; one with no stream open for
 * `idleTimeoutMs` gets GOAWAY (NO_ERROR) and ends.
 */
import type { Socket } from 'node:net';
import {
  DEFAULT_WINDOW,
  Flag,
  FrameType,
  H2Error,
  MAX_FRAME_BYTES,
  MAX_WINDOW,
  SETTINGS_ACK,
  Setting,
  encodeFrame,
  goawayFrame,
  rstStreamFrame,
  settingsFrame,
  windowUpdateFrame,
  unpadded,
} from './frame.js';
import { FrameReader } from './frame-reader.js';
import { HpackDecoder } from './hpack-decoder.js';
import { encodeHeaderBlock, type OutgoingFields } from './hpack-encoder.js';
import { RateBudget } from './rate-budget.js';
import { RawH2Stream, type StreamOwner } from './raw-stream.js';
import { TurnOutput } from './turn-output.js';
import { requestHeaders, type RequestHeaders } from './request-headers.js';

export interface RawH2Limits {
  /** SETTINGS_MAX_CONCURRENT_STREAMS; one more is refused with REFUSED_STREAM. */
  readonly maxConcurrentStreams: number;
  /** Our receive window, per stream and for the connection. */
  readonly windowBytes: number;
  /** SETTINGS_MAX_HEADER_LIST_SIZE, and the bound on one header block's bytes. */
  readonly maxHeaderListBytes: number;
  /** A stream whose output waits this long for the peer's window is reset. */
  readonly sendStallMs: number;
  /** PING, SETTINGS and RST_STREAM frames allowed at once, and per second after that. */
  readonly controlBurst: number;
  readonly controlPerSecond: number;
  /** A connection whose client preface and first SETTINGS have not come by then is dropped (0: never). */
  readonly prefaceTimeoutMs: number;
  /** A connection with no open stream for this long gets GOAWAY (NO_ERROR) and is ended (0: never). */
  readonly idleTimeoutMs: number;
}

export const DEFAULT_RAW_H2_LIMITS: RawH2Limits = {
  maxConcurrentStreams: 1000,
  windowBytes: 8 * 1024 * 1024,
  maxHeaderListBytes: 64 * 1024,
  sendStallMs: 30_000,
  controlBurst: 1000,
  controlPerSecond: 200,
  // A slow or silent opener holds a socket for nothing: node:http2's own servers give none, we give 10 s.
  prefaceTimeoutMs: 10_000,
  // Long enough for a gateway's quiet spells (its clients reconnect on GOAWAY), short enough that abandoned
  // connections do not pile up: grpc-js's server has no idle bound by default.
  idleTimeoutMs: 300_000,
};

export type StreamHandler = (stream: RawH2Stream, headers: RequestHeaders) => void;

/** Stream ids reset by us that are remembered (a bounded memory: older ones get STREAM_CLOSED again). */
const RESET_MEMORY = 256;

export class RawH2Connection implements StreamOwner {
  private readonly frames: FrameReader;
  private settingsRead = false;
  /** The peer acknowledged our SETTINGS: from then on it knows our stream limit. */
  private settingsAcked = false;
  private dead = false;
  /** GOAWAY sent or received: no new streams; the socket ends when the last one closes. */
  private goingAway = false;
  private readonly decoder: HpackDecoder;
  private readonly streams = new Map<number, RawH2Stream>();
  private readonly resetByUs = new Set<number>();
  private lastStreamId = 0;
  private sendWindow = DEFAULT_WINDOW;
  private peerInitialWindow = DEFAULT_WINDOW;
  private receiveWindow: number;
  private uncredited = 0;
  private readonly control: RateBudget;
  /** This turn's frames, written as one buffer at its end. */
  private readonly output: TurnOutput;
  /** When the last stream closed (the connection has been idle since then, while none is open). */
  private idleSince = performance.now();
  private idleTimer: NodeJS.Timeout | undefined = undefined;
  private prefaceTimer: NodeJS.Timeout | undefined = undefined;

  constructor(
    private readonly socket: Socket,
    private readonly limits: RawH2Limits,
    private readonly onStream: StreamHandler,
  ) {
    this.decoder = new HpackDecoder(limits.maxHeaderListBytes);
    this.output = new TurnOutput(socket);
    this.receiveWindow = limits.windowBytes;
    this.control = new RateBudget(limits.controlBurst, limits.controlPerSecond);
    socket.setNoDelay(true);
    this.frames = new FrameReader(
      {
        frame: (type, flags, streamId, payload) => this.onFrame(type, flags, streamId, payload),
        headerBlock: (streamId, block, endStream) => this.onHeaderBlock(streamId, block, endStream),
        connectionError: (code) => this.fail(code),
      },
      limits.maxHeaderListBytes,
      { expectPreface: true },
    );
    socket.on('data', (chunk: Buffer) => this.frames.read(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.closeAll();
      clearTimeout(this.idleTimer);
      clearTimeout(this.prefaceTimer);
    });
    if (limits.prefaceTimeoutMs > 0) this.prefaceTimer = setTimeout(() => socket.destroy(), limits.prefaceTimeoutMs).unref();
    if (limits.idleTimeoutMs > 0) this.idleTimer = setTimeout(this.checkIdle, limits.idleTimeoutMs).unref();
    this.write(
      settingsFrame([
        [Setting.MAX_CONCURRENT_STREAMS, limits.maxConcurrentStreams],
        [Setting.INITIAL_WINDOW_SIZE, limits.windowBytes],
        [Setting.MAX_HEADER_LIST_SIZE, limits.maxHeaderListBytes],
        [Setting.ENABLE_PUSH, 0],
      ]),
    );
    if (limits.windowBytes > DEFAULT_WINDOW) this.write(windowUpdateFrame(0, limits.windowBytes - DEFAULT_WINDOW));
  }

  /** Streams open now. */
  get openStreams(): number {
    return this.streams.size;
  }

  /** GOAWAY (NO_ERROR): streams open now finish, new ones are refused, then the socket ends. */
  shutdown(): void {
    if (this.dead || this.goingAway) return;
    this.goingAway = true;
    this.write(goawayFrame(this.lastStreamId, H2Error.NO_ERROR));
    if (this.streams.size === 0) this.output.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** One timer per connection, re-armed from `idleSince` when it fires, not per stream (the hot path stays timer-free). */
  private readonly checkIdle = (): void => {
    const idleMs = this.streams.size === 0 ? performance.now() - this.idleSince : 0;
    const left = this.limits.idleTimeoutMs - idleMs;
    if (left <= 0) this.shutdown();
    else if (!this.dead) this.idleTimer = setTimeout(this.checkIdle, left).unref();
  };

  // StreamOwner

  sendHeaders(stream: RawH2Stream, fields: OutgoingFields, endStream: boolean): void {
    stream.outbound.push({ headers: encodeHeaderBlock(fields), end: endStream });
    if (endStream) stream.localEnded = true;
    this.flush(stream);
  }

  sendData(stream: RawH2Stream, chunk: Uint8Array, endStream: boolean): boolean {
    stream.outbound.push({ data: chunk, end: endStream });
    if (endStream) stream.localEnded = true;
    this.flush(stream);
    return stream.outbound.length === 0;
  }

  reset(stream: RawH2Stream, code: number): void {
    if (stream.closed) return;
    this.rememberReset(stream.id);
    this.write(rstStreamFrame(stream.id, code));
    this.closeStream(stream, code);
  }

  credit(stream: RawH2Stream, bytes: number): void {
    this.creditConnection(bytes);
    stream.uncredited += bytes;
    // No update once the peer has ended the stream: it will send no more.
    if (!stream.remoteEnded && !stream.closed && stream.uncredited >= this.limits.windowBytes / 2) {
      this.write(windowUpdateFrame(stream.id, stream.uncredited));
      stream.receiveWindow += stream.uncredited;
      stream.uncredited = 0;
    }
  }

  // Reading

  private onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (!this.settingsRead) {
      // The preface's SETTINGS comes first (RFC 9113 §3.4).
      if (type !== FrameType.SETTINGS || (flags & Flag.ACK) !== 0) return this.fail(H2Error.PROTOCOL_ERROR);
      this.settingsRead = true;
      clearTimeout(this.prefaceTimer);
    }
    switch (type) {
      case FrameType.DATA:
        return this.onData(flags, streamId, payload);
      case FrameType.HEADERS:
        return this.onHeaders(flags, streamId, payload);
      case FrameType.CONTINUATION:
        return this.frames.continuation(flags, streamId, payload);
      case FrameType.PRIORITY:
        if (streamId === 0) return this.fail(H2Error.PROTOCOL_ERROR);
        if (payload.length !== 5) return this.fail(H2Error.FRAME_SIZE_ERROR);
        return;
      case FrameType.RST_STREAM:
        return this.onReset(streamId, payload);
      case FrameType.SETTINGS:
        return this.onSettings(flags, streamId, payload);
      case FrameType.PUSH_PROMISE:
        return this.fail(H2Error.PROTOCOL_ERROR); // a client cannot push (RFC 9113 §8.4)
      case FrameType.PING:
        return this.onPing(flags, streamId, payload);
      case FrameType.GOAWAY:
        if (streamId !== 0) return this.fail(H2Error.PROTOCOL_ERROR);
        this.goingAway = true;
        if (this.streams.size === 0) this.output.end();
        return;
      case FrameType.WINDOW_UPDATE:
        return this.onWindowUpdate(streamId, payload);
      default:
        return; // unknown frame types are ignored (RFC 9113 §4.1)
    }
  }

  private onData(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) return this.fail(H2Error.PROTOCOL_ERROR);
    const body = unpadded(flags, payload);
    if (body === undefined) return this.fail(H2Error.PROTOCOL_ERROR);
    this.receiveWindow -= payload.length;
    if (this.receiveWindow < 0) return this.fail(H2Error.FLOW_CONTROL_ERROR);
    if (streamId > this.lastStreamId) return this.fail(H2Error.PROTOCOL_ERROR); // DATA on an idle stream
    const stream = this.streams.get(streamId);
    if (stream === undefined && this.resetByUs.has(streamId)) {
      // Our RST_STREAM may have crossed the peer's DATA: ignored (RFC 9113 §5.1), the bytes still count.
      this.creditConnection(payload.length);
      return;
    }
    if (stream === undefined || stream.remoteEnded) {
      // Closed, or the peer already ended it: STREAM_CLOSED (§5.1); the bytes still count for the connection.
      this.creditConnection(payload.length);
      if (stream === undefined) this.write(rstStreamFrame(streamId, H2Error.STREAM_CLOSED));
      else this.reset(stream, H2Error.STREAM_CLOSED);
      return;
    }
    stream.receiveWindow -= payload.length;
    if (stream.receiveWindow < 0) {
      this.creditConnection(payload.length);
      return this.reset(stream, H2Error.FLOW_CONTROL_ERROR);
    }
    const padding = payload.length - body.length;
    if (padding > 0) this.credit(stream, padding);
    if (body.length > 0) {
      stream.deliverData(body);
      if (!stream.manualCredit) this.credit(stream, body.length);
    }
    if ((flags & Flag.END_STREAM) !== 0) this.endRemote(stream);
  }

  private onHeaders(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0 || streamId % 2 === 0) return this.fail(H2Error.PROTOCOL_ERROR);
    this.frames.headers(flags, streamId, payload);
  }

  private onHeaderBlock(streamId: number, block: Buffer, endStream: boolean): void {
    // Decoded whatever happens to the stream: the table must follow the peer's encoder.
    const decoded = this.decoder.decode(block);
    const open = this.streams.get(streamId);
    if (open !== undefined) {
      // Trailers: they must end the stream (RFC 9113 §8.1).
      if (!endStream || open.remoteEnded) return this.fail(H2Error.PROTOCOL_ERROR);
      return this.endRemote(open);
    }
    // A new stream's id must exceed every id before it; a lower one is reused or out of order (§5.1.1).
    if (streamId <= this.lastStreamId) return this.fail(H2Error.PROTOCOL_ERROR);
    this.lastStreamId = streamId;
    if (decoded.overLimit) return this.refuse(streamId, H2Error.ENHANCE_YOUR_CALM);
    if (this.streams.size >= this.limits.maxConcurrentStreams && this.settingsAcked) {
      // The peer acknowledged the limit and broke it anyway: hostile, not racing our SETTINGS (node:http2 ends it too).
      return this.fail(H2Error.PROTOCOL_ERROR);
    }
    if (this.goingAway || this.streams.size >= this.limits.maxConcurrentStreams) return this.refuse(streamId, H2Error.REFUSED_STREAM);
    const checked = requestHeaders(decoded.fields);
    if ('problem' in checked) return this.refuse(streamId, H2Error.PROTOCOL_ERROR);
    const stream = new RawH2Stream(streamId, this, this.peerInitialWindow, this.limits.windowBytes);
    this.streams.set(streamId, stream);
    this.onStream(stream, checked.headers);
    if (endStream) this.endRemote(stream);
  }

  /** RST_STREAM for a stream we never opened (refused or malformed). */
  private refuse(streamId: number, code: number): void {
    this.rememberReset(streamId);
    this.write(rstStreamFrame(streamId, code));
  }

  /** The last RESET_MEMORY ids we reset, so DATA already on its way for them is not answered again. */
  private rememberReset(streamId: number): void {
    this.resetByUs.add(streamId);
    if (this.resetByUs.size > RESET_MEMORY) this.resetByUs.delete(this.resetByUs.values().next().value!);
  }

  private onReset(streamId: number, payload: Buffer): void {
    if (streamId === 0) return this.fail(H2Error.PROTOCOL_ERROR);
    if (payload.length !== 4) return this.fail(H2Error.FRAME_SIZE_ERROR);
    if (streamId > this.lastStreamId) return this.fail(H2Error.PROTOCOL_ERROR); // an idle stream
    // Rapid reset (CVE-2023-44487): each reset is work the peer made us start for free.
    if (!this.control.take()) return this.fail(H2Error.ENHANCE_YOUR_CALM);
    const stream = this.streams.get(streamId);
    if (stream !== undefined) this.closeStream(stream, payload.readUInt32BE(0));
  }

  private onSettings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) return this.fail(H2Error.PROTOCOL_ERROR);
    if ((flags & Flag.ACK) !== 0) {
      if (payload.length !== 0) this.fail(H2Error.FRAME_SIZE_ERROR);
      this.settingsAcked = true;
      return;
    }
    if (payload.length % 6 !== 0) return this.fail(H2Error.FRAME_SIZE_ERROR);
    if (!this.control.take()) return this.fail(H2Error.ENHANCE_YOUR_CALM);
    for (let at = 0; at < payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (id === Setting.ENABLE_PUSH && value > 1) return this.fail(H2Error.PROTOCOL_ERROR);
      if (id === Setting.MAX_FRAME_SIZE && (value < MAX_FRAME_BYTES || value > 2 ** 24 - 1)) return this.fail(H2Error.PROTOCOL_ERROR);
      if (id === Setting.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR);
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) {
          stream.sendWindow += delta;
          if (stream.sendWindow > MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR);
        }
      }
      // HEADER_TABLE_SIZE needs nothing: our encoder never uses the dynamic table. Others are advisory here.
    }
    this.write(SETTINGS_ACK);
    for (const stream of [...this.streams.values()]) this.flush(stream);
  }

  private onPing(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) return this.fail(H2Error.PROTOCOL_ERROR);
    if (payload.length !== 8) return this.fail(H2Error.FRAME_SIZE_ERROR);
    if ((flags & Flag.ACK) !== 0) return;
    if (!this.control.take()) return this.fail(H2Error.ENHANCE_YOUR_CALM);
    this.write(encodeFrame(FrameType.PING, Flag.ACK, 0, payload));
  }

  private onWindowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) return this.fail(H2Error.FRAME_SIZE_ERROR);
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (streamId === 0) {
      if (increment === 0) return this.fail(H2Error.PROTOCOL_ERROR);
      this.sendWindow += increment;
      if (this.sendWindow > MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR);
      for (const stream of [...this.streams.values()]) if (stream.outbound.length > 0) this.flush(stream);
      return;
    }
    if (streamId > this.lastStreamId) return this.fail(H2Error.PROTOCOL_ERROR);
    const stream = this.streams.get(streamId);
    if (stream === undefined) return; // closed: a late update is allowed
    if (increment === 0) return this.reset(stream, H2Error.PROTOCOL_ERROR);
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) return this.reset(stream, H2Error.FLOW_CONTROL_ERROR);
    this.flush(stream);
  }

  // Streams

  private endRemote(stream: RawH2Stream): void {
    stream.remoteEnded = true;
    stream.deliverEnd();
    if (stream.localEnded && stream.outbound.length === 0) this.closeStream(stream, H2Error.NO_ERROR);
  }

  private closeStream(stream: RawH2Stream, code: number): void {
    if (stream.closed) return;
    stream.closed = true;
    stream.rstCode = code;
    stream.outbound.length = 0;
    this.streams.delete(stream.id);
    if (this.streams.size === 0) this.idleSince = performance.now();
    stream.deliverClose();
    if (this.goingAway && this.streams.size === 0 && !this.dead) this.output.end();
  }

  private creditConnection(bytes: number): void {
    this.uncredited += bytes;
    if (this.uncredited >= this.limits.windowBytes / 2) {
      this.write(windowUpdateFrame(0, this.uncredited));
      this.receiveWindow += this.uncredited;
      this.uncredited = 0;
    }
  }

  // Writing

  /** Sends what the windows allow of `stream`'s queued output, in order. */
  private flush(stream: RawH2Stream): void {
    const queue = stream.outbound;
    while (queue.length > 0 && !stream.closed) {
      const item = queue[0]!;
      if (item.headers !== undefined) {
        this.writeHeaderBlock(stream.id, item.headers, item.end);
        queue.shift();
        continue;
      }
      const data = item.data!;
      const allowed = Math.min(this.sendWindow, stream.sendWindow, MAX_FRAME_BYTES, data.length);
      if (allowed <= 0 && data.length > 0) return this.block(stream);
      const last = allowed === data.length;
      this.output.frame(FrameType.DATA, last && item.end ? Flag.END_STREAM : 0, stream.id, last ? data : data.subarray(0, allowed));
      this.sendWindow -= allowed;
      stream.sendWindow -= allowed;
      if (last) queue.shift();
      else item.data = data.subarray(allowed);
    }
    if (stream.blockedSince !== 0) {
      stream.blockedSince = 0;
      stream.emit('drain');
    }
    if (stream.localEnded && queue.length === 0 && stream.remoteEnded) this.closeStream(stream, H2Error.NO_ERROR);
  }

  private block(stream: RawH2Stream): void {
    if (stream.blockedSince !== 0) return;
    const since = performance.now();
    stream.blockedSince = since;
    setTimeout(() => {
      if (stream.blockedSince === since) this.reset(stream, H2Error.CANCEL);
    }, this.limits.sendStallMs).unref();
  }

  private writeHeaderBlock(streamId: number, block: Buffer, endStream: boolean): void {
    const endFlag = endStream ? Flag.END_STREAM : 0;
    if (block.length <= MAX_FRAME_BYTES) {
      this.output.frame(FrameType.HEADERS, Flag.END_HEADERS | endFlag, streamId, block);
      return;
    }
    for (let at = 0; at < block.length; at += MAX_FRAME_BYTES) {
      const part = block.subarray(at, at + MAX_FRAME_BYTES);
      const type = at === 0 ? FrameType.HEADERS : FrameType.CONTINUATION;
      const flags = (at === 0 ? endFlag : 0) | (at + MAX_FRAME_BYTES >= block.length ? Flag.END_HEADERS : 0);
      this.output.frame(type, flags, streamId, part);
    }
  }

  /** Whole frames, sent with the rest of this turn's output in one write at its end. */
  private write(bytes: Uint8Array): void {
    this.output.raw(bytes);
  }

  /** A connection error: GOAWAY with `code`, every stream closed, the socket ended. */
  private fail(code: number): void {
    if (this.dead) return;
    this.write(goawayFrame(this.lastStreamId, code));
    this.dead = true;
    this.closeAll();
    this.output.end();
    // A peer that does not read our GOAWAY does not keep the socket.
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  private closeAll(): void {
    this.dead = true;
    this.frames.stop();
    for (const stream of [...this.streams.values()]) this.closeStream(stream, H2Error.CANCEL);
  }
}
