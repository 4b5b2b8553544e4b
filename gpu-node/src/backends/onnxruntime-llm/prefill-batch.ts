/**
 * Batched prefill: the prompts of several newcomers in one model run, each a row right-padded to the
 * group's longest prompt. A pad position sits after every real token of its row, so the causal mask
 * already keeps real tokens from seeing it, and the attention mask marks it unreal as well; each row's
 * real positions therefore compute what they would alone. Its presents ([rows, kv_heads, longest,
 * head_dim]) hold each row's cache in the first `length` positions, and its logits row at position
 * length - 1 gives the first token. A prompt longer than a run's budget is prefilled alone in chunks
 * instead (`chunkFeeds`): each chunk's queries attend to the earlier chunks' cache, fed back as the past.
 */

export type PrefillFeeds = Record<string, { data: Float32Array | BigInt64Array; dims: readonly number[] }>;

/** The token a pad position carries: any valid id does (it is masked), 0 is always one. */
const PAD_ID = 0n;

/** Padded tokens a group of these prompt lengths costs in one run (rows × the longest). */
export function paddedTokens(rows: number, longest: number): number {
  return rows * longest;
}

/** input_ids, position_ids and attention_mask of one run over `prompts`, right-padded to the longest. */
export function prefillFeeds(prompts: readonly (readonly number[])[]): { feeds: PrefillFeeds; longest: number } {
  const rows = prompts.length;
  const longest = prompts.reduce((max, p) => Math.max(max, p.length), 0);
  const ids = new BigInt64Array(rows * longest).fill(PAD_ID);
  const positions = new BigInt64Array(rows * longest);
  const mask = new BigInt64Array(rows * longest);
  prompts.forEach((prompt, r) => {
    const start = r * longest;
    for (let i = 0; i < longest; i++) positions[start + i] = BigInt(i);
    for (let i = 0; i < prompt.length; i++) {
      ids[start + i] = BigInt(prompt[i] as number);
      mask[start + i] = 1n;
    }
  });
  const dims = [rows, longest];
  return { feeds: { input_ids: { data: ids, dims }, position_ids: { data: positions, dims }, attention_mask: { data: mask, dims } }, longest };
}

/** Row r's part of a batched present ([heads, longest, head_dim]: positions first, as KvCache.addRow reads it). */
export function presentRow(present: Float32Array, row: number, rows: number): Float32Array {
  const rowFloats = present.length / rows;
  return present.subarray(row * rowFloats, (row + 1) * rowFloats);
}

/** input_ids, position_ids and attention_mask of one chunk (positions from..to-1) of a prompt whose first `from` positions are cached. */
export function chunkFeeds(prompt: readonly number[], from: number, to: number): PrefillFeeds {
  const length = to - from;
  return {
    input_ids: { data: BigInt64Array.from(prompt.slice(from, to), BigInt), dims: [1, length] },
    position_ids: { data: BigInt64Array.from({ length }, (_, i) => BigInt(from + i)), dims: [1, length] },
    attention_mask: { data: new BigInt64Array(to).fill(1n), dims: [1, to] },
  };
}
