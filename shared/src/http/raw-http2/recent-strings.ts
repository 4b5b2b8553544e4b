/**
 * The last few Huffman strings a connection's peer sent, by their coded bytes: a client sends the same
 * few literals with every request (nghttp2 and node:http2 never index `:path`, so a gRPC method's path
 * comes Huffman-coded each time), and comparing ~30 bytes is cheaper than decoding them again. Bounded:
 * `size` entries of at most `maxBytes` coded bytes, the oldest replaced first.
 */
export class RecentStrings {
  private readonly codes: Uint8Array[] = [];
  private readonly texts: string[] = [];
  private next = 0;

  constructor(
    private readonly size: number,
    private readonly maxBytes: number,
  ) {}

  /** The text of `block[start, end)` if it is one of the remembered codes. */
  find(block: Uint8Array, start: number, end: number): string | undefined {
    const length = end - start;
    if (length > this.maxBytes) return undefined;
    search: for (let i = 0; i < this.codes.length; i++) {
      const code = this.codes[i]!;
      if (code.length !== length) continue;
      for (let j = 0; j < length; j++) if (code[j] !== block[start + j]) continue search;
      return this.texts[i];
    }
    return undefined;
  }

  /** Remembers `text` as the decoding of `block[start, end)` (copied: the block's buffer is not kept). */
  remember(block: Uint8Array, start: number, end: number, text: string): void {
    if (end - start > this.maxBytes) return;
    // A copy (a Buffer's slice would be a view of the received bytes, which change or are kept alive).
    const code = new Uint8Array(end - start);
    code.set(block.subarray(start, end));
    this.codes[this.next] = code;
    this.texts[this.next] = text;
    this.next = (this.next + 1) % this.size;
  }
}
