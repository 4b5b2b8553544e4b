/**
 * The frame-reading half both raw HTTP/2 connections share (client-connection.ts, connection.ts): the
 * socket's bytes cut into frames (RFC 9113 §4.1), a frame over our 16 KiB refused, HEADERS and its
 * CONTINUATION frames joined into one header block, a frame inside a block refused, malformed HPACK made a
 * COMPRESSION_ERROR. A header block larger than the list it may decode to is a flood, however it is cut: it
 * ends the connection with ENHANCE_YOUR_CALM. What each frame means stays the connection's (its sink).
 */
import { CLIENT_PREFACE, FRAME_HEAD_BYTES, Flag, FrameType, H2Error, MAX_FRAME_BYTES, unpadded } from './frame.js';
import { HpackError } from './hpack-decoder.js';

export interface FrameSink {
  /** Every frame but those the reader consumes itself (the CONTINUATIONs of a block it is joining are not). */
  frame(type: number, flags: number, streamId: number, payload: Buffer): void;
  /** A whole header block (HEADERS' payload after padding and priority, plus its CONTINUATIONs). */
  headerBlock(streamId: number, block: Buffer, endStream: boolean): void;
  /** A connection error: the sink sends GOAWAY and calls `stop()`. */
  connectionError(code: number, reason: string): void;
}

/** A header block waiting for its CONTINUATION frames. */
interface PartialBlock {
  readonly streamId: number;
  readonly endStream: boolean;
  readonly parts: Buffer[];
  bytes: number;
}

const EMPTY = Buffer.alloc(0);

export class FrameReader {
  private pending: Buffer = EMPTY;
  private partial: PartialBlock | undefined = undefined;
  private stopped = false;
  /** A server reads the client's 24-byte preface before any frame (RFC 9113 §3.4). */
  private prefaceRead: boolean;

  constructor(
    private readonly sink: FrameSink,
    private readonly maxHeaderListBytes: number,
    options: { readonly expectPreface: boolean },
  ) {
    this.prefaceRead = !options.expectPreface;
  }

  /** Bytes from the socket; whole frames go to the sink at once, a frame's start waits for its rest. */
  read(chunk: Buffer): void {
    if (this.stopped) return;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    try {
      this.readFrames();
    } catch (error) {
      if (error instanceof HpackError) this.sink.connectionError(H2Error.COMPRESSION_ERROR, `bad HPACK from the peer: ${error.message}`);
      else throw error;
    }
  }

  /** The connection is over: nothing more is read, and held bytes are let go. */
  stop(): void {
    this.stopped = true;
    this.pending = EMPTY;
    this.partial = undefined;
  }

  /** A HEADERS frame on a stream the connection accepts: its block, now or once its CONTINUATIONs have come. */
  headers(flags: number, streamId: number, payload: Buffer): void {
    let block = unpadded(flags, payload);
    if (block === undefined) return this.sink.connectionError(H2Error.PROTOCOL_ERROR, 'bad HEADERS padding');
    if ((flags & Flag.PRIORITY) !== 0) {
      if (block.length < 5) return this.sink.connectionError(H2Error.FRAME_SIZE_ERROR, 'a HEADERS priority past the frame');
      block = block.subarray(5);
    }
    const endStream = (flags & Flag.END_STREAM) !== 0;
    if ((flags & Flag.END_HEADERS) !== 0) return this.sink.headerBlock(streamId, block, endStream);
    this.partial = { streamId, endStream, parts: [block], bytes: block.length };
    if (block.length > this.maxHeaderListBytes) this.sink.connectionError(H2Error.ENHANCE_YOUR_CALM, 'a header block over the limit');
  }

  /** A CONTINUATION frame: the next part of the block being joined, which must be on its stream. */
  continuation(flags: number, streamId: number, payload: Buffer): void {
    const partial = this.partial;
    if (partial === undefined || streamId !== partial.streamId) return this.sink.connectionError(H2Error.PROTOCOL_ERROR, 'CONTINUATION outside a header block');
    partial.parts.push(payload);
    partial.bytes += payload.length;
    // Empty CONTINUATIONs count by their heads, so a flood of them is bounded too.
    if (partial.bytes + FRAME_HEAD_BYTES * partial.parts.length > this.maxHeaderListBytes) {
      return this.sink.connectionError(H2Error.ENHANCE_YOUR_CALM, `a header block over ${this.maxHeaderListBytes} bytes (CONTINUATION flood)`);
    }
    if ((flags & Flag.END_HEADERS) === 0) return;
    this.partial = undefined;
    this.sink.headerBlock(streamId, Buffer.concat(partial.parts, partial.bytes), partial.endStream);
  }

  private readFrames(): void {
    if (!this.prefaceRead) {
      const have = Math.min(this.pending.length, CLIENT_PREFACE.length);
      if (!this.pending.subarray(0, have).equals(CLIENT_PREFACE.subarray(0, have))) return this.sink.connectionError(H2Error.PROTOCOL_ERROR, 'not the HTTP/2 client preface');
      if (have < CLIENT_PREFACE.length) return;
      this.prefaceRead = true;
      this.pending = this.pending.subarray(CLIENT_PREFACE.length);
    }
    let at = 0;
    const pending = this.pending;
    while (!this.stopped && pending.length - at >= FRAME_HEAD_BYTES) {
      const length = (pending[at]! << 16) | (pending[at + 1]! << 8) | pending[at + 2]!;
      // We never raise SETTINGS_MAX_FRAME_SIZE: a larger frame is a connection error (RFC 9113 §4.2).
      if (length > MAX_FRAME_BYTES) return this.sink.connectionError(H2Error.FRAME_SIZE_ERROR, `a frame of ${length} bytes`);
      if (pending.length - at < FRAME_HEAD_BYTES + length) break;
      const type = pending[at + 3]!;
      const flags = pending[at + 4]!;
      const streamId = pending.readUInt32BE(at + 5) & 0x7fffffff;
      const payload = pending.subarray(at + FRAME_HEAD_BYTES, at + FRAME_HEAD_BYTES + length);
      at += FRAME_HEAD_BYTES + length;
      const partial = this.partial;
      if (partial !== undefined && (type !== FrameType.CONTINUATION || streamId !== partial.streamId)) {
        this.sink.connectionError(H2Error.PROTOCOL_ERROR, 'a frame inside a header block');
      } else this.sink.frame(type, flags, streamId, payload);
    }
    this.pending = this.stopped ? EMPTY : pending.subarray(at);
  }
}
