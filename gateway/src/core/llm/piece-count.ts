/**
 * A streamed piece's token count, remembered: streamed pieces are mostly a token or two and the same
 * few thousand strings recur, so most events spare the tokenizer's regex and merges.
 */
import type { TokenCounter } from '../../../../shared/src/llm/token-counter.js';

const MEMO_MAX_CHARS = 32;
const MEMO_MAX_ENTRIES = 8192;
const memos = new WeakMap<TokenCounter, Map<string, number>>();

/** `text`'s count by `counter`, from a bounded memo per counter for short pieces. */
export function countPiece(counter: TokenCounter, text: string): number {
  if (text.length > MEMO_MAX_CHARS) return counter.count(text);
  let memo = memos.get(counter);
  if (memo === undefined) memos.set(counter, (memo = new Map()));
  let count = memo.get(text);
  if (count === undefined) {
    count = counter.count(text);
    if (memo.size >= MEMO_MAX_ENTRIES) memo.clear();
    memo.set(text, count);
  }
  return count;
}

/** Slots of the byte-keyed table per counter (a power of two): a slot holds the last piece hashed to it. */
const BYTE_SLOTS = 4096;
const utf8 = new TextDecoder();

interface ByteMemo {
  readonly keys: (Uint8Array | undefined)[];
  readonly counts: Int32Array;
}

const byteMemos = new WeakMap<TokenCounter, ByteMemo>();

/**
 * The count of the text whose UTF-8 bytes are `bytes[from, to)` (a JSON string literal's content without
 * escapes), found by the bytes themselves: a streamed event's piece is counted without making its string.
 * Exact: a slot answers only for byte-identical pieces, and a miss decodes and counts as `countPiece` does.
 */
export function countPieceBytes(counter: TokenCounter, bytes: Uint8Array, from: number, to: number): number {
  const length = to - from;
  if (length > MEMO_MAX_CHARS) return counter.count(utf8.decode(bytes.subarray(from, to)));
  let memo = byteMemos.get(counter);
  if (memo === undefined) byteMemos.set(counter, (memo = { keys: new Array<Uint8Array | undefined>(BYTE_SLOTS), counts: new Int32Array(BYTE_SLOTS) }));
  // FNV-1a over the bytes.
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  const slot = (hash >>> 0) & (BYTE_SLOTS - 1);
  const key = memo.keys[slot];
  if (key !== undefined && key.length === length) {
    let same = true;
    for (let i = 0; i < length; i++) {
      if (key[i] !== bytes[from + i]) {
        same = false;
        break;
      }
    }
    if (same) return memo.counts[slot]!;
  }
  const count = countPiece(counter, utf8.decode(bytes.subarray(from, to)));
  memo.keys[slot] = bytes.slice(from, to);
  memo.counts[slot] = count;
  return count;
}
