/**
 * One HTTP/2 connection, client side (RFC 9113), on a socket the caller connected: the preface and our
 * SETTINGS, requests on odd stream ids in order, the peer's SETTINGS honoured (MAX_CONCURRENT_STREAMS:
 * later requests wait, bounded; INITIAL_WINDOW_SIZE; MAX_FRAME_SIZE; MAX_HEADER_LIST_SIZE: a request over
 * it is refused here), flow control both ways (WINDOW_UPDATE for what we read; request bytes sent only
 * within the peer's windows, the rest queued, bounded), PING (answered, and ours with a callback),
 * GOAWAY (no new streams; streams above its last id end as refused, those below finish, or end with the
 * connection when it carries an error code), RST_STREAM,
 * trailers. Each stream's answer goes to its handler (client-stream.ts); a call's deadline is its
 * caller's, who resets the stream (`reset`) when it passes.
 *
 * A hostile peer cannot make it hold unbounded memory: a frame over our 16 KiB, DATA beyond a window,
 * a header block over `maxHeaderListBytes` (an endless CONTINUATION), PUSH_PROMISE (we disabled push),
 * frames on streams we never opened, and malformed HPACK end the connection with GOAWAY and the RFC's
 * code, every open stream ending with that reason; a header list over the limit, DATA before a stream's
 * headers, or headers after its trailers reset that stream (PROTOCOL_ERROR); a window that stays shut for
 * `sendStallMs` resets the waiting stream (CANCEL); PING and SETTINGS floods end it (ENHANCE_YOUR_CALM).
 */
import type { Socket } from 'node:net';
import {
  CLIENT_PREFACE,
  DEFAULT_WINDOW,
  FRAME_HEAD_BYTES,
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
  writeFrameHead,
} from './frame.js';
import { FrameReader } from './frame-reader.js';
import { HpackDecoder, type HeaderField } from './hpack-decoder.js';
import { RateBudget } from './rate-budget.js';
import { RawH2ClientRefusal, type RawH2ClientLimits } from './client-limits.js';
import { RawH2ClientStream, type ClientStreamEnd, type ClientStreamHandler, type RequestBlock, type ResponseFields } from './client-stream.js';

export interface RawH2ClientEvents {
  /** The peer's first SETTINGS arrived: it speaks HTTP/2. */
  ready(): void;
  /** The peer sent GOAWAY: no new streams on this connection. */
  goaway(lastStreamId: number, code: number): void;
  /** The connection ended (every stream has been closed first). */
  close(reason: string): void;
}

/** Client stream ids are odd and below 2^31. */
const LAST_STREAM_ID = 2 ** 31 - 1;
/** Below this a DATA frame's bytes are copied behind its head (one write); above it they go as they are. */
const COPY_BELOW_BYTES = 4096;
/** A turn's frames up to this size are joined into one buffer; more go corked, large payloads uncopied. */
const JOIN_BELOW_BYTES = 16 * 1024;

export class RawH2ClientConnection {
  private readonly frames: FrameReader;
  private settingsRead = false;
  private dead = false;
  private goingAway = false;
  private endReason: string | undefined;
  private readonly decoder: HpackDecoder;
  private readonly streams = new Map<number, RawH2ClientStream>();
  private readonly waiting: RawH2ClientStream[] = [];
  private nextStreamId = 1;
  private sendWindow = DEFAULT_WINDOW;
  private receiveWindow: number;
  private uncredited = 0;
  private queuedBytes = 0;
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxStreams = Number.POSITIVE_INFINITY;
  private peerMaxFrame = MAX_FRAME_BYTES;
  private peerMaxHeaderList = Number.POSITIVE_INFINITY;
  private readonly pings: Array<(error?: Error) => void> = [];
  private readonly control: RateBudget;
  /** This turn's frames, written when the turn ends (`flushTurn`). */
  private readonly turn: Uint8Array[] = [];
  private turnBytes = 0;
  private readonly flushAtTurnEnd = (): void => this.flushTurn();
  private readonly streamWindow: number;

  constructor(
    private readonly socket: Socket,
    private readonly limits: RawH2ClientLimits,
    private readonly events: RawH2ClientEvents,
  ) {
    this.decoder = new HpackDecoder(limits.maxHeaderListBytes);
    // The connection window starts at 65,535 whatever SETTINGS say (RFC 9113 §6.9.2); we only ever widen it.
    this.receiveWindow = Math.max(limits.windowBytes, DEFAULT_WINDOW);
    this.streamWindow = limits.streamWindowBytes ?? limits.windowBytes;
    this.control = new RateBudget(limits.controlBurst, limits.controlPerSecond);
    socket.setNoDelay(true);
    this.frames = new FrameReader(
      {
        frame: (type, flags, streamId, payload) => this.onFrame(type, flags, streamId, payload),
        headerBlock: (streamId, block, endStream) => this.onHeaderBlock(streamId, block, endStream),
        connectionError: (code, reason) => this.fail(code, reason),
      },
      limits.maxHeaderListBytes,
      { expectPreface: false },
    );
    socket.on('data', (chunk: Buffer) => this.frames.read(chunk));
    socket.on('error', (error: Error) => {
      this.endReason ??= error.message;
      socket.destroy();
    });
    socket.on('close', () => {
      const reason = this.endReason ?? 'the connection closed';
      this.closeAll(H2Error.CANCEL, reason);
      for (const ping of this.pings.splice(0)) ping(new Error(reason));
      this.events.close(reason);
    });
    this.write(CLIENT_PREFACE);
    this.write(
      settingsFrame([
        [Setting.ENABLE_PUSH, 0],
        [Setting.INITIAL_WINDOW_SIZE, this.streamWindow],
        [Setting.MAX_HEADER_LIST_SIZE, limits.maxHeaderListBytes],
      ]),
    );
    if (limits.windowBytes > DEFAULT_WINDOW) this.write(windowUpdateFrame(0, limits.windowBytes - DEFAULT_WINDOW));
  }

  /** Streams sent and not yet closed, and those waiting for a slot. */
  get activeStreams(): number {
    return this.streams.size + this.waiting.length;
  }

  /** False once the connection takes no new streams (GOAWAY either way, an error, ids used up, closed). */
  get open(): boolean {
    return !this.dead && !this.goingAway && !this.socket.destroyed && this.nextStreamId <= LAST_STREAM_ID;
  }

  /** Starts a request (HEADERS now, or when a slot frees); throws RawH2ClientRefusal when it cannot be taken. */
  request(request: RequestBlock, body: readonly Uint8Array[], handler: ClientStreamHandler): RawH2ClientStream {
    if (!this.open) throw new RawH2ClientRefusal(this.endReason ?? 'the connection takes no new streams');
    if (request.listBytes > this.peerMaxHeaderList) {
      throw new RawH2ClientRefusal(`request header list of ${request.listBytes} bytes over the peer's ${this.peerMaxHeaderList}`);
    }
    const stream = new RawH2ClientStream(request, body, handler);
    if (this.queuedBytes + stream.queuedBytes > this.limits.maxQueuedBytes) {
      throw new RawH2ClientRefusal(`send queue full (${this.queuedBytes} bytes waiting for the peer's window)`);
    }
    const full = this.streams.size >= this.peerMaxStreams;
    if (full && this.waiting.length >= this.limits.maxWaitingStreams) throw new RawH2ClientRefusal(`${this.waiting.length} requests already wait for a stream slot`);
    this.queuedBytes += stream.queuedBytes;
    if (full) this.waiting.push(stream);
    else this.start(stream);
    return stream;
  }

  /** Ends `stream` here: RST_STREAM `code` if it was sent; its handler's close sees `reason`. */
  reset(stream: RawH2ClientStream, code: number = H2Error.CANCEL, reason = 'reset by the caller'): void {
    if (stream.closed) return;
    if (stream.id !== 0) this.write(rstStreamFrame(stream.id, code));
    this.closeStream(stream, { code, refused: stream.id === 0, sent: stream.id !== 0, by: 'local', reason });
  }

  /**
   * Back-pressure for a stream's reader: while held, the answer bytes it receives are not credited back, so
   * the peer sends at most one stream window more; `releaseCredit` credits what it held back (the connection's
   * window is credited either way: one paused stream must not stall the others).
   */
  holdCredit(stream: RawH2ClientStream): void {
    stream.creditHeld = true;
  }

  releaseCredit(stream: RawH2ClientStream): void {
    if (!stream.creditHeld) return;
    stream.creditHeld = false;
    this.creditStream(stream, 0);
  }

  /** Sends a PING; `done` runs when its ACK arrives, or with an error when the connection ends first. */
  ping(done: (error?: Error) => void): void {
    if (this.dead || this.socket.destroyed) return done(new Error(this.endReason ?? 'the connection closed'));
    this.pings.push(done);
    this.write(encodeFrame(FrameType.PING, 0, 0, Buffer.alloc(8)));
  }

  /** GOAWAY (NO_ERROR) from us: no new streams; the socket ends when the last one closes. */
  shutdown(): void {
    if (this.dead || this.goingAway) return;
    this.goingAway = true;
    this.endReason ??= 'the connection was closed by the gateway';
    this.write(goawayFrame(0, H2Error.NO_ERROR));
    this.refuseWaiting(this.endReason);
    if (this.streams.size === 0) this.endSocket();
  }

  destroy(reason: string): void {
    this.endReason ??= reason;
    this.socket.destroy();
  }

  // Reading

  private onFrame(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (!this.settingsRead && (type !== FrameType.SETTINGS || (flags & Flag.ACK) !== 0)) {
      // The server's preface is a SETTINGS frame (RFC 9113 §3.4).
      return this.fail(H2Error.PROTOCOL_ERROR, 'the peer did not start with SETTINGS (not an HTTP/2 server?)');
    }
    switch (type) {
      case FrameType.DATA:
        return this.onData(flags, streamId, payload);
      case FrameType.HEADERS:
        return this.onHeaders(flags, streamId, payload);
      case FrameType.CONTINUATION:
        return this.frames.continuation(flags, streamId, payload);
      case FrameType.PRIORITY:
        if (streamId === 0) return this.fail(H2Error.PROTOCOL_ERROR, 'PRIORITY on stream 0');
        if (payload.length !== 5) return this.fail(H2Error.FRAME_SIZE_ERROR, 'a PRIORITY frame of the wrong size');
        return;
      case FrameType.RST_STREAM:
        return this.onReset(streamId, payload);
      case FrameType.SETTINGS:
        return this.onSettings(flags, streamId, payload);
      case FrameType.PUSH_PROMISE:
        return this.fail(H2Error.PROTOCOL_ERROR, 'PUSH_PROMISE with push disabled');
      case FrameType.PING:
        return this.onPing(flags, streamId, payload);
      case FrameType.GOAWAY:
        return this.onGoaway(streamId, payload);
      case FrameType.WINDOW_UPDATE:
        return this.onWindowUpdate(streamId, payload);
      default:
        return; // unknown frame types are ignored (RFC 9113 §4.1)
    }
  }

  /** A stream id the peer may name: one we opened (odd, already used). */
  private opened(streamId: number): boolean {
    return streamId % 2 === 1 && streamId < this.nextStreamId;
  }

  private onData(flags: number, streamId: number, payload: Buffer): void {
    if (!this.opened(streamId)) return this.fail(H2Error.PROTOCOL_ERROR, `DATA on stream ${streamId}, which we never opened`);
    const body = unpadded(flags, payload);
    if (body === undefined) return this.fail(H2Error.PROTOCOL_ERROR, 'bad DATA padding');
    this.receiveWindow -= payload.length;
    if (this.receiveWindow < 0) return this.fail(H2Error.FLOW_CONTROL_ERROR, 'DATA beyond the connection window');
    this.creditConnection(payload.length);
    const stream = this.streams.get(streamId);
    if (stream === undefined) return; // closed here (reset by us, or done): its late bytes only count
    if (!stream.headersSeen || stream.remoteEnded) return this.resetStream(stream, H2Error.PROTOCOL_ERROR, stream.remoteEnded ? 'DATA after the answer ended' : 'DATA before the answer headers');
    stream.receiveWindow -= payload.length;
    if (stream.receiveWindow < 0) return this.resetStream(stream, H2Error.FLOW_CONTROL_ERROR, 'DATA beyond the stream window');
    this.creditStream(stream, payload.length);
    if (body.length > 0) stream.handler.data(body);
    if ((flags & Flag.END_STREAM) !== 0 && !stream.closed) this.endRemote(stream);
  }

  private onHeaders(flags: number, streamId: number, payload: Buffer): void {
    if (!this.opened(streamId)) return this.fail(H2Error.PROTOCOL_ERROR, `HEADERS on stream ${streamId}, which we never opened`);
    this.frames.headers(flags, streamId, payload);
  }

  private onHeaderBlock(streamId: number, block: Buffer, endStream: boolean): void {
    // Decoded whatever happens to the stream: the table must follow the peer's encoder.
    const decoded = this.decoder.decode(block);
    const stream = this.streams.get(streamId);
    if (stream === undefined) return; // closed here already
    if (decoded.overLimit) return this.resetStream(stream, H2Error.PROTOCOL_ERROR, `answer headers over ${this.limits.maxHeaderListBytes} bytes`);
    if (stream.remoteEnded) return this.resetStream(stream, H2Error.PROTOCOL_ERROR, 'headers after the answer ended');
    const fields = fieldsOf(decoded.fields);
    if (fields === undefined) return this.resetStream(stream, H2Error.PROTOCOL_ERROR, 'a malformed answer header field');
    if (!stream.headersSeen) {
      const status = fields[':status'];
      if (status === undefined || !/^[1-5]\d\d$/.test(status)) return this.resetStream(stream, H2Error.PROTOCOL_ERROR, 'answer headers without a valid :status');
      if (status[0] === '1') {
        // Informational: the final headers follow (RFC 9113 §8.1); one cannot end the stream.
        if (endStream) return this.resetStream(stream, H2Error.PROTOCOL_ERROR, 'an informational answer that ends the stream');
        return;
      }
      stream.headersSeen = true;
      stream.handler.headers(fields, endStream);
    } else {
      // Trailers end the stream and carry no pseudo-headers (RFC 9113 §8.1).
      if (!endStream || fields[':status'] !== undefined) return this.resetStream(stream, H2Error.PROTOCOL_ERROR, 'a second header block that is not trailers');
      stream.handler.trailers(fields);
    }
    if (endStream && !stream.closed) this.endRemote(stream);
  }

  private onReset(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) return this.fail(H2Error.FRAME_SIZE_ERROR, 'an RST_STREAM frame of the wrong size');
    if (!this.opened(streamId)) return this.fail(H2Error.PROTOCOL_ERROR, `RST_STREAM on stream ${streamId}, which we never opened`);
    const stream = this.streams.get(streamId);
    if (stream === undefined) return;
    const code = payload.readUInt32BE(0);
    this.closeStream(stream, { code, refused: code === H2Error.REFUSED_STREAM, sent: true, by: 'peer', reason: `the peer reset the stream (code ${code})` });
  }

  private onSettings(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) return this.fail(H2Error.PROTOCOL_ERROR, 'SETTINGS on a stream');
    if ((flags & Flag.ACK) !== 0) {
      if (payload.length !== 0) this.fail(H2Error.FRAME_SIZE_ERROR, 'a SETTINGS ACK with a payload');
      return;
    }
    if (payload.length % 6 !== 0) return this.fail(H2Error.FRAME_SIZE_ERROR, 'a SETTINGS frame of the wrong size');
    if (!this.control.take()) return this.fail(H2Error.ENHANCE_YOUR_CALM, 'a SETTINGS flood');
    for (let at = 0; at < payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (id === Setting.ENABLE_PUSH && value > 1) return this.fail(H2Error.PROTOCOL_ERROR, 'ENABLE_PUSH over 1');
      if (id === Setting.MAX_FRAME_SIZE) {
        if (value < MAX_FRAME_BYTES || value > 2 ** 24 - 1) return this.fail(H2Error.PROTOCOL_ERROR, `MAX_FRAME_SIZE ${value}`);
        this.peerMaxFrame = value;
      }
      if (id === Setting.MAX_CONCURRENT_STREAMS) this.peerMaxStreams = value;
      if (id === Setting.MAX_HEADER_LIST_SIZE) this.peerMaxHeaderList = value;
      if (id === Setting.INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR, `INITIAL_WINDOW_SIZE ${value}`);
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) {
          stream.sendWindow += delta;
          if (stream.sendWindow > MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR, 'a stream window over 2^31-1');
        }
      }
      // HEADER_TABLE_SIZE needs nothing: our encoder never uses the dynamic table.
    }
    this.write(SETTINGS_ACK);
    if (!this.settingsRead) {
      this.settingsRead = true;
      this.events.ready();
    }
    this.startWaiting();
    for (const stream of [...this.streams.values()]) if (stream.outbound.length > 0) this.flush(stream);
  }

  private onPing(flags: number, streamId: number, payload: Buffer): void {
    if (streamId !== 0) return this.fail(H2Error.PROTOCOL_ERROR, 'PING on a stream');
    if (payload.length !== 8) return this.fail(H2Error.FRAME_SIZE_ERROR, 'a PING frame of the wrong size');
    if ((flags & Flag.ACK) !== 0) return this.pings.shift()?.();
    if (!this.control.take()) return this.fail(H2Error.ENHANCE_YOUR_CALM, 'a PING flood');
    this.write(encodeFrame(FrameType.PING, Flag.ACK, 0, payload));
  }

  private onGoaway(streamId: number, payload: Buffer): void {
    if (streamId !== 0) return this.fail(H2Error.PROTOCOL_ERROR, 'GOAWAY on a stream');
    if (payload.length < 8) return this.fail(H2Error.FRAME_SIZE_ERROR, 'a GOAWAY frame too short');
    const lastStreamId = payload.readUInt32BE(0) & 0x7fffffff;
    const code = payload.readUInt32BE(4);
    this.goingAway = true;
    this.endReason ??= `the node sent GOAWAY (code ${code})`;
    this.refuseWaiting(this.endReason);
    // Streams above the last id were never processed (RFC 9113 §6.8): the caller may send them elsewhere.
    for (const stream of [...this.streams.values()]) {
      if (stream.id > lastStreamId) this.closeStream(stream, { code: H2Error.REFUSED_STREAM, refused: true, sent: true, by: 'connection', reason: this.endReason });
    }
    this.events.goaway(lastStreamId, code);
    // With an error code the peer is ending the connection for a fault: the streams it took end now, as node:http2 does.
    if (code !== H2Error.NO_ERROR) {
      this.closeAll(code, this.endReason);
      this.socket.destroy();
    } else if (this.streams.size === 0 && !this.dead) this.endSocket();
  }

  private onWindowUpdate(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) return this.fail(H2Error.FRAME_SIZE_ERROR, 'a WINDOW_UPDATE frame of the wrong size');
    const increment = payload.readUInt32BE(0) & 0x7fffffff;
    if (streamId === 0) {
      if (increment === 0) return this.fail(H2Error.PROTOCOL_ERROR, 'a WINDOW_UPDATE of 0');
      this.sendWindow += increment;
      if (this.sendWindow > MAX_WINDOW) return this.fail(H2Error.FLOW_CONTROL_ERROR, 'a connection window over 2^31-1');
      for (const stream of [...this.streams.values()]) if (stream.outbound.length > 0) this.flush(stream);
      return;
    }
    if (!this.opened(streamId)) return this.fail(H2Error.PROTOCOL_ERROR, `WINDOW_UPDATE on stream ${streamId}, which we never opened`);
    const stream = this.streams.get(streamId);
    if (stream === undefined) return; // closed: a late update is allowed
    if (increment === 0) return this.resetStream(stream, H2Error.PROTOCOL_ERROR, 'a stream WINDOW_UPDATE of 0');
    stream.sendWindow += increment;
    if (stream.sendWindow > MAX_WINDOW) return this.resetStream(stream, H2Error.FLOW_CONTROL_ERROR, 'a stream window over 2^31-1');
    this.flush(stream);
  }

  // Streams

  private start(stream: RawH2ClientStream): void {
    stream.id = this.nextStreamId;
    this.nextStreamId += 2;
    stream.sendWindow = this.peerInitialWindow;
    stream.receiveWindow = this.streamWindow;
    this.streams.set(stream.id, stream);
    this.writeHeaderBlock(stream.id, stream.request.block, stream.outbound.length === 0);
    if (stream.outbound.length > 0) this.flush(stream);
  }

  private startWaiting(): void {
    while (this.waiting.length > 0 && this.streams.size < this.peerMaxStreams && this.open) this.start(this.waiting.shift()!);
  }

  private refuseWaiting(reason: string): void {
    for (const stream of this.waiting.splice(0)) this.closeStream(stream, { code: H2Error.REFUSED_STREAM, refused: true, sent: false, by: 'connection', reason });
  }

  /** The peer finished its answer. A request still sending is cut short: the answer no longer needs it (RFC 9113 §8.1). */
  private endRemote(stream: RawH2ClientStream): void {
    stream.remoteEnded = true;
    if (stream.outbound.length > 0) this.write(rstStreamFrame(stream.id, H2Error.NO_ERROR));
    this.closeStream(stream, { code: H2Error.NO_ERROR, refused: false, sent: true, by: 'answer', reason: 'the answer ended' });
  }

  private resetStream(stream: RawH2ClientStream, code: number, reason: string): void {
    this.reset(stream, code, `the node broke the protocol: ${reason}`);
  }

  private closeStream(stream: RawH2ClientStream, end: ClientStreamEnd): void {
    if (stream.closed) return;
    stream.closed = true;
    this.queuedBytes -= stream.queuedBytes;
    stream.queuedBytes = 0;
    stream.outbound.length = 0;
    stream.blockedSince = 0;
    if (stream.id === 0) {
      const at = this.waiting.indexOf(stream);
      if (at >= 0) this.waiting.splice(at, 1);
    } else this.streams.delete(stream.id);
    stream.handler.close(end);
    this.startWaiting();
    if (this.goingAway && this.streams.size === 0 && !this.dead && !this.socket.destroyed) this.endSocket();
  }

  private creditConnection(bytes: number): void {
    this.uncredited += bytes;
    if (this.uncredited >= this.limits.windowBytes / 2) {
      this.write(windowUpdateFrame(0, this.uncredited));
      this.receiveWindow += this.uncredited;
      this.uncredited = 0;
    }
  }

  private creditStream(stream: RawH2ClientStream, bytes: number): void {
    stream.uncredited += bytes;
    if (!stream.creditHeld && stream.uncredited >= this.streamWindow / 2 && !stream.closed) {
      this.write(windowUpdateFrame(stream.id, stream.uncredited));
      stream.receiveWindow += stream.uncredited;
      stream.uncredited = 0;
    }
  }

  // Writing

  /** Sends what the windows allow of `stream`'s request bytes, the last frame with END_STREAM; chunks share frames. */
  private flush(stream: RawH2ClientStream): void {
    const queue = stream.outbound;
    while (queue.length > 0 && !stream.closed) {
      const allowed = Math.min(this.sendWindow, stream.sendWindow, this.peerMaxFrame, stream.queuedBytes);
      if (allowed <= 0) return this.block(stream);
      const flags = allowed === stream.queuedBytes ? Flag.END_STREAM : 0;
      const copy = allowed < COPY_BELOW_BYTES;
      const head = Buffer.allocUnsafe(FRAME_HEAD_BYTES + (copy ? allowed : 0));
      writeFrameHead(head, 0, allowed, FrameType.DATA, flags, stream.id);
      if (!copy) this.write(head);
      let at = FRAME_HEAD_BYTES;
      for (let left = allowed; left > 0; ) {
        const chunk = queue[0]!;
        const part = chunk.length <= left ? chunk : chunk.subarray(0, left);
        if (copy) head.set(part, at);
        else this.write(part);
        at += part.length;
        left -= part.length;
        if (part === chunk) queue.shift();
        else queue[0] = chunk.subarray(part.length);
      }
      if (copy) this.write(head);
      this.sendWindow -= allowed;
      stream.sendWindow -= allowed;
      stream.queuedBytes -= allowed;
      this.queuedBytes -= allowed;
    }
    stream.blockedSince = 0;
  }

  private block(stream: RawH2ClientStream): void {
    if (stream.blockedSince !== 0) return;
    const since = performance.now();
    stream.blockedSince = since;
    setTimeout(() => {
      if (stream.blockedSince === since) this.reset(stream, H2Error.CANCEL, `the node's flow-control window stayed shut for ${this.limits.sendStallMs} ms`);
    }, this.limits.sendStallMs).unref();
  }

  private writeHeaderBlock(streamId: number, block: Buffer, endStream: boolean): void {
    const endFlag = endStream ? Flag.END_STREAM : 0;
    const max = this.peerMaxFrame;
    if (block.length <= max) {
      const out = Buffer.allocUnsafe(FRAME_HEAD_BYTES + block.length);
      writeFrameHead(out, 0, block.length, FrameType.HEADERS, Flag.END_HEADERS | endFlag, streamId);
      block.copy(out, FRAME_HEAD_BYTES);
      this.write(out);
      return;
    }
    for (let at = 0; at < block.length; at += max) {
      const type = at === 0 ? FrameType.HEADERS : FrameType.CONTINUATION;
      const flags = (at === 0 ? endFlag : 0) | (at + max >= block.length ? Flag.END_HEADERS : 0);
      this.write(encodeFrame(type, flags, streamId, block.subarray(at, at + max)));
    }
  }

  /** Frames for the socket, gathered until the end of this turn: one turn's frames leave in one write. */
  private write(bytes: Uint8Array): void {
    if (this.socket.destroyed) return;
    if (this.turn.length === 0) process.nextTick(this.flushAtTurnEnd);
    this.turn.push(bytes);
    this.turnBytes += bytes.length;
  }

  /**
   * A small turn (a call's HEADERS and DATA) is joined into one buffer for one `write`: `writev` of the pieces cost
   * a system call's worth more (issue 17's profile); a large one goes corked, its tensors uncopied.
   */
  private flushTurn(): void {
    const turn = this.turn;
    if (turn.length === 0) return;
    const bytes = this.turnBytes;
    this.turnBytes = 0;
    if (this.socket.destroyed) turn.length = 0;
    else if (turn.length === 1) this.socket.write(turn.pop()!);
    else if (bytes <= JOIN_BELOW_BYTES) this.socket.write(Buffer.concat(turn.splice(0), bytes));
    else {
      this.socket.cork();
      for (const piece of turn.splice(0)) this.socket.write(piece);
      this.socket.uncork();
    }
  }

  /** Ends the socket after this turn's frames. */
  private endSocket(): void {
    this.flushTurn();
    this.socket.end();
  }

  /** A connection error: GOAWAY with `code`, every stream ended with `reason`, the socket ended. */
  private fail(code: number, reason: string): void {
    if (this.dead) return;
    this.endReason ??= `the node broke the protocol: ${reason}`;
    this.write(goawayFrame(0, code));
    this.dead = true;
    this.closeAll(code, this.endReason);
    this.endSocket();
    // A peer that does not read our GOAWAY does not keep the socket.
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  private closeAll(code: number, reason: string): void {
    this.dead = true;
    this.frames.stop();
    this.refuseWaiting(reason);
    for (const stream of [...this.streams.values()]) this.closeStream(stream, { code, refused: false, sent: true, by: 'connection', reason });
  }
}

/** Header fields as an object (first value of a repeated name), or undefined when a name is not lowercase or a pseudo-header is unknown. */
function fieldsOf(fields: readonly HeaderField[]): ResponseFields | undefined {
  const out: ResponseFields = Object.create(null) as ResponseFields;
  for (const [name, value] of fields) {
    if (name.length === 0 || name !== name.toLowerCase()) return undefined;
    if (name[0] === ':' && name !== ':status') return undefined;
    if (!(name in out)) out[name] = value;
  }
  return out;
}
