/**
 * Sampling parameters (the `sampling_parameters` JSON of the vLLM-style I/O) and the sampler that picks
 * each next token from a row of logits: greedy when temperature is 0, otherwise softmax at the
 * temperature over the top-k, then top-p (nucleus) cut, drawn with a per-request seeded PRNG so a seed
 * gives the same text whatever else runs in the batch.
 */
import { mulberry32 } from '../../../../shared/src/random/mulberry32.js';
import { TesseraError } from '../../../../shared/src/errors/index.js';

export interface SamplingParameters {
  /** Tokens to generate at most; undefined: up to the context. */
  readonly maxTokens: number | undefined;
  /** 0 = greedy. */
  readonly temperature: number;
  /** 0 = no top-k cut. */
  readonly topK: number;
  readonly topP: number;
  readonly seed: number | undefined;
  readonly stop: readonly string[];
  /** Keep generating past the end-of-sequence token (vLLM's `ignore_eos`). */
  readonly ignoreEos: boolean;
}

export const MAX_STOP_STRINGS = 16;
export const MAX_STOP_LENGTH = 256;

function invalid(message: string): never {
  throw TesseraError.invalidArg(`sampling_parameters: ${message}`);
}

function numberIn(value: unknown, key: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    invalid(`'${key}' must be a number in [${min}, ${max}], got ${JSON.stringify(value)}`);
  }
  return value;
}

function integerIn(value: unknown, key: string, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    invalid(`'${key}' must be an integer in [${min}, ${max}], got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Parses and checks the JSON text; absent or empty text means all defaults (greedy, no limit). */
export function parseSamplingParameters(text: string | undefined): SamplingParameters {
  let json: Record<string, unknown> = {};
  if (text !== undefined && text !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      invalid('must be a JSON object');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) invalid('must be a JSON object');
    json = parsed as Record<string, unknown>;
  }
  const stopValue = json['stop'] ?? [];
  const stop = typeof stopValue === 'string' ? [stopValue] : stopValue;
  if (!Array.isArray(stop) || stop.length > MAX_STOP_STRINGS || stop.some((s) => typeof s !== 'string' || s.length > MAX_STOP_LENGTH)) {
    invalid(`'stop' must be a string or a list of at most ${MAX_STOP_STRINGS} strings of at most ${MAX_STOP_LENGTH} characters`);
  }
  const ignoreEos = json['ignore_eos'] ?? false;
  if (typeof ignoreEos !== 'boolean') invalid("'ignore_eos' must be a boolean");
  return {
    maxTokens: integerIn(json['max_tokens'], 'max_tokens', 0, 1 << 30),
    temperature: numberIn(json['temperature'], 'temperature', 0, 100, 0),
    topK: integerIn(json['top_k'], 'top_k', -1, 1 << 30) ?? 0,
    topP: numberIn(json['top_p'], 'top_p', Number.MIN_VALUE, 1, 1),
    seed: integerIn(json['seed'], 'seed', -(2 ** 53) + 1, 2 ** 53 - 1),
    stop: (stop as string[]).filter((s) => s !== ''),
    ignoreEos,
  };
}

/** A 64-bit-safe seed folded to mulberry32's 32-bit state: the same sequence on every machine. */
export function seededRandom(seed: number): () => number {
  return mulberry32(seed ^ Math.floor(seed / 2 ** 32));
}

export function argmax(logits: Float32Array, offset: number, length: number, banned = -1): number {
  let best = banned === 0 ? 1 : 0;
  for (let i = best + 1; i < length; i++) if (i !== banned && (logits[offset + i] as number) > (logits[offset + best] as number)) best = i;
  return best;
}

/** Picks a token from `logits[offset .. offset+vocab)`; `banned` (the EOS id under ignore_eos) is never picked. */
export function sampleToken(
  params: SamplingParameters,
  random: () => number,
  logits: Float32Array,
  offset: number,
  vocab: number,
  banned = -1,
): number {
  if (params.temperature === 0) return argmax(logits, offset, vocab, banned);
  const ids: number[] = [];
  for (let i = 0; i < vocab; i++) if (i !== banned) ids.push(i);
  ids.sort((a, b) => (logits[offset + b] as number) - (logits[offset + a] as number) || a - b);
  const k = params.topK > 0 ? Math.min(params.topK, ids.length) : ids.length;
  const top = ids.slice(0, k);
  const max = logits[offset + (top[0] as number)] as number;
  const weights = top.map((id) => Math.exp(((logits[offset + id] as number) - max) / params.temperature));
  const total = weights.reduce((a, b) => a + b, 0);
  // Nucleus: the smallest prefix whose probability reaches top_p.
  let keep = weights.length;
  if (params.topP < 1) {
    let mass = 0;
    for (let i = 0; i < weights.length; i++) {
      mass += (weights[i] as number) / total;
      if (mass >= params.topP) {
        keep = i + 1;
        break;
      }
    }
  }
  const kept = weights.slice(0, keep);
  let draw = random() * kept.reduce((a, b) => a + b, 0);
  for (let i = 0; i < keep; i++) {
    draw -= kept[i] as number;
    if (draw < 0) return top[i] as number;
  }
  return top[keep - 1] as number;
}
