/**
 * Version routing: per model, a traffic split over versions (`90% v1, 10% v2`), optionally sticky by
 * a request header, so one session keeps seeing the same version.
 *
 * - A request that names a version gets exactly that version; splits apply only to requests without.
 * - Without a split, the version is left to the node (its latest READY one).
 * - Only versions READY somewhere count: a split entry whose version no node serves is skipped and
 *   the others share its traffic; when none is served, the node's latest version is used.
 * - Sticky: the header's value is hashed (FNV-1a, 32 bits, over `model` + value) onto the weights, so
 *   every gateway maps one value to the same version without shared state. The mapping changes only
 *   when the set of available versions or the weights change. Without the header the pick is random.
 */
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { PickerName } from './pickers.js';
import { PICKER_NAMES } from './pickers.js';

export interface VersionSplit {
  /** A decimal version string, as in the model repository ("1", "2"). */
  readonly version: string;
  /** A relative weight > 0; weights need not add up to 100. */
  readonly weight: number;
}

export interface ModelRouting {
  /** Traffic split over versions; default none (the node's latest READY version). */
  readonly splits?: readonly VersionSplit[];
  /** Header whose value pins a caller to one version of the split; default none (random per request). */
  readonly stickyHeader?: string;
}

export interface RoutingConfig {
  /** Node picker; default 'p2c' (power of two choices). 'round-robin' is the benchmark baseline. */
  readonly policy?: PickerName;
  /** Version routing per model name; default none. */
  readonly models?: Readonly<Record<string, ModelRouting>>;
}

const VERSION_PATTERN = /^[0-9]{1,19}$/;
const HEADER_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Validates and freezes a routing config (from the gateway's config file); errors name the field. */
export function normalizeRoutingConfig(config: RoutingConfig = {}): RoutingConfig {
  const fail = (path: string, message: string): never => {
    throw TesseraError.invalidArg(`invalid routing config: ${path} ${message}`);
  };
  const policy = config.policy ?? 'p2c';
  if (!PICKER_NAMES.includes(policy)) fail('policy', `must be one of ${PICKER_NAMES.join(', ')} (got ${JSON.stringify(policy)})`);
  const models: Record<string, ModelRouting> = {};
  for (const [model, routing] of Object.entries(config.models ?? {})) {
    const path = `models.${model}`;
    const splits = (routing.splits ?? []).map((split, i) => {
      if (typeof split.version !== 'string' || !VERSION_PATTERN.test(split.version)) {
        fail(`${path}.splits[${i}].version`, `must be a decimal version string (got ${JSON.stringify(split.version)})`);
      }
      if (typeof split.weight !== 'number' || !Number.isFinite(split.weight) || split.weight <= 0) {
        fail(`${path}.splits[${i}].weight`, `must be a number > 0 (got ${JSON.stringify(split.weight)})`);
      }
      return Object.freeze({ version: split.version, weight: split.weight });
    });
    const seen = new Set<string>();
    for (const split of splits) {
      if (seen.has(split.version)) fail(`${path}.splits`, `lists version ${split.version} twice`);
      seen.add(split.version);
    }
    if (routing.stickyHeader !== undefined && !HEADER_PATTERN.test(routing.stickyHeader)) {
      fail(`${path}.stickyHeader`, `must be a header name (got ${JSON.stringify(routing.stickyHeader)})`);
    }
    models[model] = Object.freeze({
      splits: Object.freeze(splits),
      ...(routing.stickyHeader !== undefined ? { stickyHeader: routing.stickyHeader.toLowerCase() } : {}),
    });
  }
  return Object.freeze({ policy, models: Object.freeze(models) });
}

/** FNV-1a over the UTF-8 bytes; stable across processes and runtimes. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * The version a request without an explicit version goes to, or undefined for "the node's latest".
 * `sticky`: the sticky header's value when configured and present; `available(v)`: whether some
 * node serves version v; `random` in [0, 1).
 */
export function selectVersion(
  model: string,
  routing: ModelRouting | undefined,
  sticky: string | undefined,
  available: (version: string) => boolean,
  random: () => number = Math.random,
): string | undefined {
  const splits = (routing?.splits ?? []).filter((split) => available(split.version));
  if (splits.length === 0) return undefined;
  const total = splits.reduce((sum, split) => sum + split.weight, 0);
  // Hash onto [0, total) with 2^32 buckets: fine-grained enough for any realistic weights.
  const point = sticky !== undefined ? (fnv1a32(`${model}\u0000${sticky}`) / 2 ** 32) * total : random() * total;
  let acc = 0;
  for (const split of splits) {
    acc += split.weight;
    if (point < acc) return split.version;
  }
  return splits[splits.length - 1]!.version;
}
