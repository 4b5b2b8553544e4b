/**
 * HPACK's Huffman code (RFC 7541 §5.2, Appendix B), decode side. The code is canonical, so the table is
 * the code length of each symbol (0-255, then EOS); the codes follow from the lengths, shortest first
 * and by symbol within a length, and are checked against a few of the RFC's at load (huffman.test.ts).
 */

const LENGTHS = (
  '13 23 28 28 28 28 28 28 28 24 30 28 28 30 28 28 28 28 28 28 28 28 30 28 28 28 28 28 28 28 28 28 ' +
  '6 10 10 12 13 6 8 11 10 10 8 11 8 6 6 6 5 5 5 6 6 6 6 6 6 6 7 8 15 6 12 10 ' +
  '13 6 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 7 8 7 8 13 19 13 14 6 ' +
  '15 5 6 5 6 5 6 6 6 5 7 7 6 6 6 5 6 7 6 5 5 6 7 7 7 7 7 15 11 14 13 28 ' +
  '20 22 20 20 22 22 22 23 22 23 23 23 23 23 24 23 24 24 22 23 24 23 23 23 23 21 22 23 22 23 23 24 ' +
  '22 21 20 22 22 23 23 21 23 22 22 24 21 22 23 23 21 21 22 21 23 22 23 23 20 22 22 22 23 22 22 23 ' +
  '26 26 20 19 22 23 22 25 26 26 26 27 27 26 24 25 19 21 26 27 27 26 27 24 21 21 26 26 28 27 27 27 ' +
  '20 24 20 21 22 21 21 23 22 22 25 25 24 24 26 23 26 27 26 26 27 27 27 27 27 28 27 27 27 27 27 26 30'
)
  .split(' ')
  .map(Number);

const EOS = 256;

/** Each symbol's canonical code (as a number: up to 30 bits) and length. */
export const HUFFMAN_CODES: ReadonlyArray<{ readonly code: number; readonly bits: number }> = (() => {
  const order = LENGTHS.map((bits, symbol) => ({ bits, symbol })).sort((a, b) => a.bits - b.bits || a.symbol - b.symbol);
  const codes = new Array<{ code: number; bits: number }>(LENGTHS.length);
  let code = 0;
  let previous = order[0]!.bits;
  order.forEach(({ bits, symbol }, i) => {
    if (i > 0) code = (code + 1) * 2 ** (bits - previous);
    previous = bits;
    codes[symbol] = { code, bits };
  });
  return codes;
})();

/**
 * The decode tree as a 4-bit state machine: state s, nibble n → entry (s * 16 + n) of three arrays: the
 * next state, the symbol emitted on the way (-1: none; only one symbol fits in 4 bits since codes are ≥ 5),
 * and whether the walk hit EOS. `acceptEnd[s]`: a string may end in state s (padding ≤ 7 bits, all ones).
 */
const { nextState, emitted, failed, acceptEnd } = (() => {
  // First the binary tree: node n's children at child[2n], child[2n + 1]; a leaf is -(symbol + 1).
  const child = new Int32Array(2 * 512);
  let nodes = 1;
  HUFFMAN_CODES.forEach(({ code, bits }, symbol) => {
    let node = 0;
    for (let bit = bits - 1; bit >= 0; bit--) {
      const slot = 2 * node + (Math.floor(code / 2 ** bit) % 2);
      if (bit === 0) child[slot] = -(symbol + 1);
      else {
        if (child[slot] === 0) child[slot] = nodes++;
        node = child[slot]!;
      }
    }
  });
  // Then each internal node's depth and whether its path is all ones (the padding rule).
  const depth = new Int32Array(nodes);
  const allOnes = new Uint8Array(nodes);
  allOnes[0] = 1;
  for (let n = 0; n < nodes; n++) {
    for (const bit of [0, 1]) {
      const c = child[2 * n + bit]!;
      if (c > 0) {
        depth[c] = depth[n]! + 1;
        allOnes[c] = allOnes[n]! & bit;
      }
    }
  }
  const next = new Int32Array(nodes * 16);
  const emit = new Int32Array(nodes * 16).fill(-1);
  const fail = new Uint8Array(nodes * 16);
  for (let s = 0; s < nodes; s++) {
    for (let nibble = 0; nibble < 16; nibble++) {
      let node = s;
      for (let bit = 3; bit >= 0; bit--) {
        const c = child[2 * node + ((nibble >> bit) & 1)]!;
        if (c < 0) {
          if (-c - 1 === EOS) fail[s * 16 + nibble] = 1;
          emit[s * 16 + nibble] = -c - 1;
          node = 0;
        } else node = c;
      }
      next[s * 16 + nibble] = node;
    }
  }
  const accept = new Uint8Array(nodes);
  for (let s = 0; s < nodes; s++) accept[s] = allOnes[s] === 1 && depth[s]! <= 7 ? 1 : 0;
  return { nextState: next, emitted: emit, failed: fail, acceptEnd: accept };
})();

/** Decodes `bytes[start, end)`; undefined when it is not a valid Huffman string (EOS inside, bad padding). */
export function huffmanDecode(bytes: Uint8Array, start: number, end: number): string | undefined {
  // At most 8 symbols per 5 bits... each byte yields at most 1.6 symbols: two per byte is a safe bound.
  const out = Buffer.allocUnsafe(2 * (end - start));
  let length = 0;
  let state = 0;
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    for (const nibble of [byte >> 4, byte & 0x0f]) {
      const at = state * 16 + nibble;
      if (failed[at] === 1) return undefined;
      const symbol = emitted[at]!;
      if (symbol >= 0) out[length++] = symbol;
      state = nextState[at]!;
    }
  }
  if (acceptEnd[state] !== 1) return undefined;
  return out.toString('latin1', 0, length);
}

/** Encodes latin1 text; used by tests to make the strings a peer's encoder would send. */
export function huffmanEncode(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  const out: number[] = [];
  let acc = 0;
  let used = 0;
  for (const byte of bytes) {
    const { code, bits } = HUFFMAN_CODES[byte]!;
    for (let bit = bits - 1; bit >= 0; bit--) {
      acc = (acc << 1) | (Math.floor(code / 2 ** bit) % 2);
      if (++used === 8) {
        out.push(acc);
        acc = 0;
        used = 0;
      }
    }
  }
  if (used > 0) out.push((acc << (8 - used)) | ((1 << (8 - used)) - 1));
  return Buffer.from(out);
}
