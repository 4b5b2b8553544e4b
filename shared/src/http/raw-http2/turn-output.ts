/**
 * What a raw HTTP/2 connection sends in one event-loop turn, gathered and written as one buffer when the
 * turn ends: frame heads are written straight into that buffer and payloads copied into it once. A `[64]`
 * wave's answers (HEADERS, DATA and trailers each) were ~200 frame buffers and ~200 entries of the
 * socket's corked write queue per batch; now they are one allocation and one socket write.
 */
import type { Socket } from 'node:net';
import { FRAME_HEAD_BYTES, writeFrameHead } from './frame.js';

/** A piece sent as it is (control frames already encoded), not given a frame head. */
const RAW = -1;

export class TurnOutput {
  /** Payloads (or raw bytes) in order. */
  private readonly pieces: Uint8Array[] = [];
  /** Two numbers per piece: its frame's `type | flags << 8` (RAW: no head) and stream id. */
  private readonly heads: number[] = [];
  private bytes = 0;
  private scheduled = false;
  private readonly flushAtTurnEnd = (): void => {
    this.scheduled = false;
    this.flush();
  };

  constructor(private readonly socket: Socket) {}

  /** A frame of `type` with `payload` (not copied until the turn ends: the caller must not change it). */
  frame(type: number, flags: number, streamId: number, payload: Uint8Array): void {
    this.add(payload, type | (flags << 8), streamId, FRAME_HEAD_BYTES + payload.length);
  }

  /** Bytes that are already whole frames. */
  raw(bytes: Uint8Array): void {
    this.add(bytes, RAW, 0, bytes.length);
  }

  /** Writes what this turn gathered now (before the socket ends). */
  flush(): void {
    const { pieces, heads } = this;
    if (pieces.length === 0) return;
    const out = pieces.length === 1 && heads[0] === RAW ? pieces[0]! : this.gather();
    pieces.length = 0;
    heads.length = 0;
    this.bytes = 0;
    if (!this.socket.destroyed) this.socket.write(out);
  }

  /** Ends the socket after what was gathered. */
  end(): void {
    this.flush();
    this.socket.end();
  }

  private add(piece: Uint8Array, head: number, streamId: number, bytes: number): void {
    if (this.socket.destroyed) return;
    this.pieces.push(piece);
    this.heads.push(head, streamId);
    this.bytes += bytes;
    if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(this.flushAtTurnEnd);
    }
  }

  private gather(): Buffer {
    const { pieces, heads } = this;
    const out = Buffer.allocUnsafe(this.bytes);
    let at = 0;
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      const head = heads[2 * i]!;
      if (head !== RAW) {
        writeFrameHead(out, at, piece.length, head & 0xff, head >>> 8, heads[2 * i + 1]!);
        at += FRAME_HEAD_BYTES;
      }
      out.set(piece, at);
      at += piece.length;
    }
    return out;
  }
}
