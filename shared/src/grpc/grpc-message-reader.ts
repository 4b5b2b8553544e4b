/**
 * The length-prefixed gRPC messages of a streaming request, cut out of its DATA chunks one at a time as
 * the reader asks (`next`): while the call is paused nothing is decoded and the bytes wait here as they
 * came, bounded by the flow-control window the call withholds. A message inside one chunk comes out as a
 * view of it; one split over chunks is joined. The declared length is checked against the receive limit
 * as soon as its prefix is in, before the message's bytes pile up (as grpc-js's StreamDecoder does).
 * The node's in-place ModelStreamInfer reads requests with it (raw-bidi-call.ts), the gateway its node's
 * streamed answers (grpc-message-splitter.ts).
 */
import { GRPC_PREFIX_BYTES } from './grpc-frame.js';

/** Why the stream's bytes cannot go on: the message is over the limit, or flagged compressed. */
export type MessageReadProblem = { readonly kind: 'too-large'; readonly declared: number } | { readonly kind: 'compressed'; readonly flag: number };

/** Chunks held at once before they are joined into one: thousands of tiny DATA frames stay one buffer. */
const MAX_HELD_CHUNKS = 1024;

export class GrpcMessageReader {
  private chunks: Buffer[] = [];
  /** Bytes of `chunks[0]` already read. */
  private offset = 0;
  private held = 0;

  constructor(private readonly maxMessageBytes: number) {}

  /** Bytes held that are not yet a whole message's. */
  get heldBytes(): number {
    return this.held;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.held += chunk.length;
    if (this.chunks.length > MAX_HELD_CHUNKS) {
      this.chunks = [Buffer.concat(this.chunks).subarray(this.offset)];
      this.offset = 0;
    }
  }

  /** The next whole message, undefined until one is in, or the problem that stops the stream. */
  next(): Buffer | undefined | MessageReadProblem {
    if (this.held < GRPC_PREFIX_BYTES) return undefined;
    const prefix = this.peek(GRPC_PREFIX_BYTES);
    if (prefix[0] !== 0) return { kind: 'compressed', flag: prefix[0]! };
    const declared = prefix.readUInt32BE(1);
    if (declared > this.maxMessageBytes) return { kind: 'too-large', declared };
    if (this.held < GRPC_PREFIX_BYTES + declared) return undefined;
    return this.take(GRPC_PREFIX_BYTES + declared).subarray(GRPC_PREFIX_BYTES);
  }

  /** The first `bytes` held, without taking them. */
  private peek(bytes: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length - this.offset >= bytes) return first.subarray(this.offset, this.offset + bytes);
    this.chunks = [Buffer.concat(this.chunks).subarray(this.offset)];
    this.offset = 0;
    return this.chunks[0]!.subarray(0, bytes);
  }

  /** Takes the first `bytes` held (a view when they lie in one chunk). */
  private take(bytes: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length - this.offset >= bytes) {
      out = first.subarray(this.offset, this.offset + bytes);
      this.offset += bytes;
    } else {
      const joined = Buffer.concat(this.chunks).subarray(this.offset);
      out = joined.subarray(0, bytes);
      this.chunks = [joined];
      this.offset = bytes;
    }
    this.held -= bytes;
    if (this.offset === this.chunks[0]!.length) {
      this.chunks.shift();
      this.offset = 0;
      if (this.held === 0) this.chunks = [];
    }
    return out;
  }
}
