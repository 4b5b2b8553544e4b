/**
 * Cuts a server-streaming gRPC answer into its messages as the DATA chunks arrive: each message is a
 * 5-byte prefix (flag, big-endian length) and its bytes (shared/src/grpc/grpc-frame.ts), and chunk
 * boundaries fall anywhere. A message larger than `maxMessageBytes` fails as soon as its prefix is
 * read, before its bytes pile up; a compressed one fails too (we never ask for compression). The
 * cutting is the shared GrpcMessageReader's, which the node's in-place streams read requests with.
 */
import { GrpcMessageReader } from '../../../../shared/src/grpc/index.js';

export class GrpcMessageSplitter {
  private readonly reader: GrpcMessageReader;

  constructor(private readonly maxMessageBytes: number) {
    this.reader = new GrpcMessageReader(maxMessageBytes);
  }

  /** Bytes of an unfinished message are held (true when the stream ended inside one). */
  get midMessage(): boolean {
    return this.reader.heldBytes > 0;
  }

  /** The messages `chunk` completes, in order; throws on a compressed or oversized message. */
  push(chunk: Buffer): Buffer[] {
    this.reader.push(chunk);
    const messages: Buffer[] = [];
    for (;;) {
      const next = this.reader.next();
      if (next === undefined) return messages;
      if (Buffer.isBuffer(next)) {
        messages.push(next);
        continue;
      }
      if (next.kind === 'compressed') throw new Error(`the node sent a compressed message (flag ${next.flag}), which was not asked for`);
      throw new Error(`Received message larger than max (${next.declared} vs. ${this.maxMessageBytes})`);
    }
  }
}
