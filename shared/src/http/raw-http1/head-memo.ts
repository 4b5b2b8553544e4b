/**
 * A one-entry memo of a connection's last request head: infer clients send the same head bytes request after
 * request (same target, headers and Content-Length), so a head that matches the last one byte for byte is the same
 * reading and is not scanned, split into lines and put in a new Map again (~9% of the node's main thread in an
 * HTTP binary `[64]` wave). Only a head the reader took (not 'incomplete' or 'handOff') is remembered.
 */
import { readRequestHead, type HeadReading, type RawRequestHead } from './head-reader.js';

export class LastHead {
  /** A copy of the last head's bytes (the socket's chunk it came in is not kept alive by the memo). */
  private bytes: Buffer | undefined;
  private head: RawRequestHead | undefined;

  /** readRequestHead(bytes), from the memo when `bytes` starts with the last head's exact bytes. */
  read(bytes: Buffer): HeadReading {
    const last = this.bytes;
    if (last !== undefined && bytes.byteLength >= last.byteLength && bytes.compare(last, 0, last.byteLength, 0, last.byteLength) === 0) {
      return this.head as RawRequestHead;
    }
    const head = readRequestHead(bytes);
    if (typeof head !== 'string') {
      this.bytes = Buffer.from(bytes.subarray(0, head.headBytes));
      this.head = head;
    }
    return head;
  }
}
