/**
 * A byte-level tokenizer.json (the Hugging Face `tokenizers` format) for the project's test decoder:
 * ids 0..255 are the bytes (in GPT-2's printable byte-to-character mapping, so the standard ByteLevel
 * pre-tokenizer and decoder apply), followed by a few special tokens. A BPE model with no merges keeps
 * every byte its own token, so any text encodes and nothing has to be downloaded.
 */

export const BYTE_TOKENIZER_SPECIALS = ['<|endoftext|>', '<|system|>', '<|user|>', '<|assistant|>'] as const;
export const BYTE_VOCAB_SIZE = 256 + BYTE_TOKENIZER_SPECIALS.length;
/** `<|endoftext|>`: the end-of-sequence token. */
export const BYTE_EOS_ID = 256;

/** GPT-2's bytes_to_unicode: printable bytes map to themselves, the others to U+0100 and up. */
export function byteToCharacter(): string[] {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const chars: string[] = [];
  let next = 256;
  for (let b = 0; b < 256; b++) chars.push(String.fromCodePoint(printable(b) ? b : next++));
  return chars;
}

export function byteTokenizerJson(): string {
  const vocab: Record<string, number> = {};
  byteToCharacter().forEach((char, id) => (vocab[char] = id));
  const special = (content: string, id: number) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  BYTE_TOKENIZER_SPECIALS.forEach((content, i) => (vocab[content] = 256 + i));
  return JSON.stringify({
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: BYTE_TOKENIZER_SPECIALS.map((content, i) => special(content, 256 + i)),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: [],
    },
  });
}

/** The tokenizer_config.json beside it: which special token ends a sequence. */
export function byteTokenizerConfigJson(): string {
  return JSON.stringify({ eos_token: '<|endoftext|>', bos_token: null, model_max_length: 512, clean_up_tokenization_spaces: false });
}
