/**
 * An unambiguous stream of typed fields into SHA-256. Every variable-length field is preceded by its
 * length and every value by a one-byte type tag, so two different field sequences can never feed the
 * hash the same bytes (e.g. input "ab" + shape [1] vs input "a" + "b..."): key collisions then need a
 * SHA-256 collision, unlike Triton's 64-bit hash_combine (triton-protocol.md §6.2).
 *
 * `node:crypto` because it hashes large tensors at native speed without concatenating them first; it
 * is also available on Cloudflare Workers with the `nodejs_compat` flag (Web Crypto's digest would
 * force the key computation to be async and the whole input into one buffer).
 */
import { Buffer } from 'node:buffer';
import { createHash, type Hash } from 'node:crypto';

const TAG_STRING = 0x73; // 's'
const TAG_BYTES = 0x62; // 'b'
const TAG_NUMBER = 0x6e; // 'n'
const TAG_BOOLEAN = 0x74; // 't'
const TAG_BIGINT = 0x69; // 'i'
const TAG_COUNT = 0x63; // 'c'

// One scratch for every hash: `update` copies what it is given before returning, and nothing awaits
// between writing the scratch and hashing it.
const scratch = new ArrayBuffer(9);
const scratchView = new DataView(scratch);
const scratchBytes = new Uint8Array(scratch);

export class FramedHash {
  private readonly hash: Hash = createHash('sha256');

  private head(tag: number, value: number): void {
    scratchView.setUint8(0, tag);
    scratchView.setFloat64(1, value, false);
    this.hash.update(scratchBytes);
  }

  /**
   * The string's UTF-8 bytes, hashed from the string itself: the same bytes TextEncoder would give
   * (lone surrogates become U+FFFD either way) without an intermediate array per field.
   */
  string(value: string): this {
    this.head(TAG_STRING, Buffer.byteLength(value, 'utf8'));
    this.hash.update(value, 'utf8');
    return this;
  }

  bytes(value: Uint8Array): this {
    this.head(TAG_BYTES, value.byteLength);
    this.hash.update(value);
    return this;
  }

  /** Any float64, exactly (so -0, 0.1 and 1e300 stay distinct). */
  number(value: number): this {
    this.head(TAG_NUMBER, value);
    return this;
  }

  boolean(value: boolean): this {
    this.head(TAG_BOOLEAN, value ? 1 : 0);
    return this;
  }

  bigint(value: bigint): this {
    const text = value.toString();
    this.head(TAG_BIGINT, text.length);
    this.hash.update(text, 'latin1');
    return this;
  }

  /** The number of items of a list that follows, so lists of different lengths never line up. */
  count(value: number): this {
    this.head(TAG_COUNT, value);
    return this;
  }

  hex(): string {
    return this.hash.digest('hex');
  }
}
