/**
 * How long a sequence binding lives without traffic. The node frees a sequence that sent nothing for
 * the model's `max_sequence_idle_microseconds`; the binding should live a little longer (`graceMs`), so
 * the gateway never forgets a sequence the node still holds (a binding that outlives the node's state
 * costs nothing: the node then answers "must specify the START flag", a clear 400 too).
 *
 * The idle time is learned from the model's config (`sequence_batching.max_sequence_idle_microseconds`,
 * 0 meaning the node's 1 s), fetched in the background from the node that answered a START, once per
 * `idleInfoTtlMs` and model. Until it is known the binding lives `defaultTtlMs` (60 s): far longer than
 * the node's 1 s default, because a gateway must not drop a slow but live stream; an abandoned binding
 * only costs a small Redis key until then.
 */

import { TesseraError } from '../../../../shared/src/errors/index.js';

export const DEFAULT_SEQUENCE_TTL_MS = 60_000;
export const DEFAULT_SEQUENCE_TTL_GRACE_MS = 2_000;
export const DEFAULT_IDLE_INFO_TTL_MS = 300_000;
/** Triton's default when `max_sequence_idle_microseconds` is 0 or absent. */
const NODE_DEFAULT_IDLE_US = 1_000_000;

export interface SequenceTtlOptions {
  /** Binding TTL while the model's idle time is unknown; default 60 000 ms. */
  readonly defaultTtlMs?: number;
  /** Added to a known idle time; default 2000 ms. */
  readonly graceMs?: number;
  /** How long a learned idle time is used before the config is read again (models get reloaded); default 300 000 ms. */
  readonly idleInfoTtlMs?: number;
}

/** The idle time (ms) of a Triton config JSON, or undefined when the model has no sequence batcher. */
export function sequenceIdleMsOf(config: unknown): number | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const batching = (config as { sequence_batching?: unknown }).sequence_batching;
  if (typeof batching !== 'object' || batching === null) return undefined;
  // Protobuf's JSON mapping writes uint64 as a string; accept a number too.
  const raw = (batching as { max_sequence_idle_microseconds?: unknown }).max_sequence_idle_microseconds;
  const us = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : 0;
  return (us > 0 ? us : NODE_DEFAULT_IDLE_US) / 1000;
}

export class SequenceTtl {
  private readonly defaultTtlMs: number;
  private readonly graceMs: number;
  private readonly idleInfoTtlMs: number;
  private readonly learned = new Map<string, { idleMs: number | undefined; at: number }>();
  private readonly fetching = new Set<string>();

  constructor(options: SequenceTtlOptions, private readonly now: () => number) {
    this.defaultTtlMs = positive(options.defaultTtlMs ?? DEFAULT_SEQUENCE_TTL_MS, 'defaultTtlMs');
    this.graceMs = nonNegative(options.graceMs ?? DEFAULT_SEQUENCE_TTL_GRACE_MS, 'graceMs');
    this.idleInfoTtlMs = nonNegative(options.idleInfoTtlMs ?? DEFAULT_IDLE_INFO_TTL_MS, 'idleInfoTtlMs');
  }

  /** The TTL of a binding of `model` now. */
  ttlMs(model: string): number {
    const idleMs = this.learned.get(model)?.idleMs;
    return idleMs === undefined ? this.defaultTtlMs : Math.ceil(idleMs + this.graceMs);
  }

  /** Reads the model's config in the background unless it is known and fresh or being read. Never throws. */
  learn(model: string, fetchConfig: () => Promise<unknown>): void {
    const known = this.learned.get(model);
    if (this.fetching.has(model) || (known !== undefined && this.now() - known.at < this.idleInfoTtlMs)) return;
    this.fetching.add(model);
    void fetchConfig()
      .then(
        (config) => this.learned.set(model, { idleMs: sequenceIdleMsOf(config), at: this.now() }),
        // Unknown for a while (the default TTL is the safe side); asked again after idleInfoTtlMs.
        () => this.learned.set(model, { idleMs: known?.idleMs, at: this.now() }),
      )
      .finally(() => this.fetching.delete(model));
  }
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) throw TesseraError.invalidArg(`sequence ${name} must be a number > 0 (got ${value})`);
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw TesseraError.invalidArg(`sequence ${name} must be a number >= 0 (got ${value})`);
  return value;
}
