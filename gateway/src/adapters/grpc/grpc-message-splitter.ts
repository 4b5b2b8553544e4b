/**
 * Cuts a server-streaming gRPC answer into its messages as the DATA chunks arrive: each message is a
 * 5-byte prefix (flag, big-endian length) and its bytes (shared/src/grpc/grpc-frame.ts), and chunk
 * boundaries fall anywhere. A message larger than `maxMessageBytes` fails as soon as its prefix is
 * read, before its bytes pile up; a compressed one fails too (we never ask for compression).
 */
import { GRPC_PREFIX_BYTES } from '../../../../shared/src/grpc/index.js';

export class GrpcMessageSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxMessageBytes: number) {}

  /** Bytes of an unfinished message are held (true when the stream ended inside one). */
  get midMessage(): boolean {
    return this.pendingBytes > 0;
  }

  /** The messages `chunk` completes, in order; throws on a compressed or oversized message. */
  push(chunk: Buffer): Buffer[] {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const messages: Buffer[] = [];
    while (this.pendingBytes >= GRPC_PREFIX_BYTES) {
      // Chunks are joined only once the whole message is there: a large one arrives in many.
      const prefix = this.pending[0]!.length >= GRPC_PREFIX_BYTES ? this.pending[0]! : this.joined();
      const flag = prefix[0]!;
      if (flag !== 0) throw new Error(`the node sent a compressed message (flag ${flag}), which was not asked for`);
      const length = prefix.readUInt32BE(1);
      if (length > this.maxMessageBytes) throw new Error(`Received message larger than max (${length} vs. ${this.maxMessageBytes})`);
      const end = GRPC_PREFIX_BYTES + length;
      if (this.pendingBytes < end) break;
      const head = this.joined();
      messages.push(head.subarray(GRPC_PREFIX_BYTES, end));
      const rest = head.subarray(end);
      this.pending = rest.length === 0 ? [] : [rest];
      this.pendingBytes = rest.length;
    }
    return messages;
  }

  private joined(): Buffer {
    if (this.pending.length > 1) this.pending = [Buffer.concat(this.pending, this.pendingBytes)];
    return this.pending[0]!;
  }
}
