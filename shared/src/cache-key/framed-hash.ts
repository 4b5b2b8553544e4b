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
import * as nodeCrypto from 'node:crypto';
import type { Hash } from 'node:crypto';

/**
 * Node's one-shot digest (20.12+): for a key whose fields all fit the buffer (the usual small request)
 * it spares the Hash object, its update and digest calls. Absent (older Node, a Workers runtime
 * without it): the streaming Hash is used for everything. Same digest either way.
 */
const hashOnce: ((algorithm: string, data: Uint8Array, encoding: 'hex') => string) | undefined =
  typeof (nodeCrypto as { hash?: unknown }).hash === 'function' ? (nodeCrypto as unknown as { hash: (a: string, d: Uint8Array, e: 'hex') => string }).hash : undefined;

const TAG_STRING = 0x73; // 's'
const TAG_BYTES = 0x62; // 'b'
const TAG_NUMBER = 0x6e; // 'n'
const TAG_BOOLEAN = 0x74; // 't'
const TAG_BIGINT = 0x69; // 'i'
const TAG_COUNT = 0x63; // 'c'

/** Fields are gathered in a buffer of this size and hashed in one update; bigger ones go directly. */
const PENDING_BYTES = 1024;
/** Strings up to this many UTF-16 units try the pure-JS ASCII copy into the buffer. */
const SHORT_STRING = 128;
/** Tag and float64 in front of every field. */
const HEAD_BYTES = 9;

/**
 * The byte stream fed to SHA-256 is fixed by the field methods (tag, float64 big-endian, payload);
 * how it is cut into `update` calls is not, and does not change the digest. Small fields are gathered
 * in a buffer of the instance's own and hashed in one `update`, because each `update` is a call into
 * native code, which cost more than the hashing itself for a key made of a few dozen short fields.
 */
export class FramedHash {
  /** Made when the fields outgrow the buffer (or there is no one-shot digest); until then none. */
  private hash: Hash | undefined;
  // allocUnsafe: a slice of Node's shared pool, cheap; every byte hashed is written first.
  private readonly pending = Buffer.allocUnsafe(PENDING_BYTES);
  private used = 0;

  private stream(): Hash {
    return (this.hash ??= nodeCrypto.createHash('sha256'));
  }

  private flush(): void {
    if (this.used === 0) return;
    this.stream().update(this.pending.subarray(0, this.used));
    this.used = 0;
  }

  /** Makes room for `bytes` in the buffer (flushing it); false when they can never fit. */
  private room(bytes: number): boolean {
    if (bytes > PENDING_BYTES) return false;
    if (this.used + bytes > PENDING_BYTES) this.flush();
    return true;
  }

  private head(tag: number, value: number): void {
    this.room(HEAD_BYTES);
    this.pending[this.used] = tag;
    this.pending.writeDoubleBE(value, this.used + 1);
    this.used += HEAD_BYTES;
  }

  /**
   * The string's UTF-8 bytes, hashed from the string itself: the same bytes TextEncoder would give
   * (lone surrogates become U+FFFD either way) without an intermediate array per field.
   */
  string(value: string): this {
    if (value.length <= SHORT_STRING && this.asciiString(value)) return this;
    const length = Buffer.byteLength(value, 'utf8');
    this.head(TAG_STRING, length);
    if (this.room(length)) {
      this.used += this.pending.write(value, this.used, 'utf8');
    } else {
      this.flush();
      this.stream().update(value, 'utf8');
    }
    return this;
  }

  /** Writes a short all-ASCII string (its UTF-8 bytes are its code units); false, writing nothing, otherwise. */
  private asciiString(value: string): boolean {
    const length = value.length;
    this.room(HEAD_BYTES + length);
    const start = this.used + HEAD_BYTES;
    for (let i = 0; i < length; i++) {
      const unit = value.charCodeAt(i);
      if (unit > 0x7f) return false;
      this.pending[start + i] = unit;
    }
    this.head(TAG_STRING, length);
    this.used += length;
    return true;
  }

  bytes(value: Uint8Array): this {
    this.head(TAG_BYTES, value.byteLength);
    if (this.room(value.byteLength)) {
      this.pending.set(value, this.used);
      this.used += value.byteLength;
    } else {
      this.flush();
      this.stream().update(value);
    }
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
    if (this.room(text.length)) {
      this.used += this.pending.write(text, this.used, 'latin1');
    } else {
      this.flush();
      this.stream().update(text, 'latin1');
    }
    return this;
  }

  /** The number of items of a list that follows, so lists of different lengths never line up. */
  count(value: number): this {
    this.head(TAG_COUNT, value);
    return this;
  }

  hex(): string {
    if (this.hash === undefined && hashOnce !== undefined) return hashOnce('sha256', this.pending.subarray(0, this.used), 'hex');
    this.flush();
    return this.stream().digest('hex');
  }
}
