/**
 * SHA-256 (FIPS 180-4) of a string, synchronously and with no runtime module: every request hashes its
 * API key, Web Crypto's digest is async (a promise and a thread-pool job per key), and the core must not
 * import node:crypto. For a key of a few dozen bytes (one or two blocks) this costs about what
 * node:crypto's createHash does, whose per-call native overhead dominates at that size.
 * Checked against node:crypto in gateway/test/sha256.test.ts.
 */

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const W = new Int32Array(64);
const INITIAL = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
const STATE = new Int32Array(8);
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const encoder = new TextEncoder();
let message = new Uint8Array(128);

/** sha256 of the UTF-8 bytes of `text`, in lower-case hex. */
export function sha256HexSync(text: string): string {
  // UTF-8 is at most 3 bytes per UTF-16 unit; 9 more for the 0x80 marker and the 64-bit length.
  const capacity = text.length * 3 + 9;
  if (message.length < capacity + 64) message = new Uint8Array((capacity + 64) * 2);
  let length = asciiInto(text, message);
  if (length < 0) length = encoder.encodeInto(text, message).written;
  const blocks = (length + 9 + 63) >>> 6;
  const end = blocks * 64;
  message[length] = 0x80;
  message.fill(0, length + 1, end - 8);
  const bits = length * 8;
  const high = Math.floor(bits / 0x100000000);
  writeWord(message, end - 8, high);
  writeWord(message, end - 4, bits >>> 0);
  STATE.set(INITIAL);
  for (let offset = 0; offset < end; offset += 64) compress(message, offset);
  let hex = '';
  for (let i = 0; i < 8; i++) {
    const word = STATE[i] as number;
    hex += (HEX[(word >>> 24) & 0xff] as string) + HEX[(word >>> 16) & 0xff] + HEX[(word >>> 8) & 0xff] + HEX[word & 0xff];
  }
  return hex;
}

/** Copies an all-ASCII string's code units (its UTF-8 bytes); -1 at the first non-ASCII unit. */
function asciiInto(text: string, out: Uint8Array): number {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit > 0x7f) return -1;
    out[i] = unit;
  }
  return text.length;
}

function writeWord(out: Uint8Array, at: number, word: number): void {
  out[at] = word >>> 24;
  out[at + 1] = word >>> 16;
  out[at + 2] = word >>> 8;
  out[at + 3] = word;
}

function compress(m: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++) {
    const j = offset + i * 4;
    W[i] = ((m[j] as number) << 24) | ((m[j + 1] as number) << 16) | ((m[j + 2] as number) << 8) | (m[j + 3] as number);
  }
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15] as number;
    const w2 = W[i - 2] as number;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = ((W[i - 16] as number) + s0 + (W[i - 7] as number) + s1) | 0;
  }
  let a = STATE[0] as number, b = STATE[1] as number, c = STATE[2] as number, d = STATE[3] as number;
  let e = STATE[4] as number, f = STATE[5] as number, g = STATE[6] as number, h = STATE[7] as number;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const choose = (e & f) ^ (~e & g);
    const t1 = (h + s1 + choose + (K[i] as number) + (W[i] as number)) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const majority = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (s0 + majority) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  STATE[0] = (STATE[0] as number) + a;
  STATE[1] = (STATE[1] as number) + b;
  STATE[2] = (STATE[2] as number) + c;
  STATE[3] = (STATE[3] as number) + d;
  STATE[4] = (STATE[4] as number) + e;
  STATE[5] = (STATE[5] as number) + f;
  STATE[6] = (STATE[6] as number) + g;
  STATE[7] = (STATE[7] as number) + h;
}
