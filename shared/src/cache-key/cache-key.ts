/**
 * The gateway's response-cache key, computed in shared/ so that every gateway runtime agrees on it.
 *
 * Key layout (default prefix `tessera:`):
 *
 *   tessera:cache:tenant:<tenantId>:<model>:<version>:{<sha256 hex>}   a tenant's entry
 *   tessera:cache:shared:<model>:<version>:{<sha256 hex>}              a model shared across tenants
 *
 * The readable segments are for people (redis-cli, SCAN MATCH `tessera:cache:tenant:acme:*` to see
 * or drop one tenant's entries); they are percent-escaped so `:`, braces, glob characters and
 * whitespace in names cannot move a segment boundary or the hash tag. Uniqueness comes from the
 * digest alone, which covers every field below, the scope included.
 *
 * Hash tag: the digest itself, `{<sha256 hex>}`. The cache only ever issues single-key commands (GET,
 * SET PX), so nothing needs two entries in one Redis Cluster slot; tagging by digest spreads entries
 * evenly over all shards. Tagging by tenant (or by `shared`) would put a whole tenant's cache, and
 * every shared model's traffic, on ONE shard: a memory and hot-key bottleneck bought for nothing.
 * Since the tag is the first `{` of the key (the prefix refuses braces, the readable segments escape
 * them), no tenant or model name can change which slot an entry lands in.
 *
 * What the digest covers (versus Triton's own key, triton-protocol.md §6.2, which hashes only model
 * name, version and input names + bytes):
 * - the scope: the tenant id, or `shared` when the model is declared shared across tenants;
 * - the model name and the RESOLVED version (never "latest": a new version must not serve old entries);
 * - each input, sorted by name: name, datatype, shape and raw bytes (so [2,8] vs [4,4] of the same
 *   bytes, or INT32 vs FP32, never collide);
 * - the requested outputs IN REQUEST ORDER with their effective binary flag (explicit `binary_data`,
 *   else the request-level default) and classification count, or "all outputs" plus the default
 *   binary flag when the request lists none: these decide which bytes the response body holds. Order
 *   is kept because the body's binary sections follow it; a reordered request costs a miss, never a
 *   wrong answer;
 * - every request parameter except `CACHE_KEY_IGNORED_PARAMETERS`, with its type (string "1",
 *   number 1, bigint 1n and true are all different).
 * Not covered: the request `id` (the replay re-stamps it, see the gateway's cache layer) and the
 * requested version as written (the resolved one is used instead).
 */
import { TesseraError } from '../errors/index.js';
import { DEFAULT_KEY_PREFIX } from '../fleet/index.js';
import type { ParameterValue } from '../tensors/index.js';
import type { CacheKeyInput } from './cache-key-input.js';
import { CACHE_KEY_IGNORED_PARAMETERS, uncacheableReason } from './cacheable.js';
import { FramedHash } from './framed-hash.js';

/** Bumped whenever the digested fields or their framing change, so old entries are never read. */
export const CACHE_KEY_SCHEMA = 'tessera-cache-key/v1';

const FORBIDDEN_PREFIX_CHARS = /[{}*?[\]\\\s]/;
const IGNORED = new Set(CACHE_KEY_IGNORED_PARAMETERS);

/**
 * The cache key of a request. Throws INVALID_ARG for an empty tenant, model or version, a bad prefix,
 * or an uncacheable request (check `isCacheable` first).
 */
export function computeCacheKey(input: CacheKeyInput): string {
  const prefix = input.prefix ?? DEFAULT_KEY_PREFIX;
  if (prefix !== DEFAULT_KEY_PREFIX && FORBIDDEN_PREFIX_CHARS.test(prefix)) {
    throw TesseraError.invalidArg(
      `invalid cache key prefix ${JSON.stringify(prefix)}: braces, glob characters and whitespace are not allowed`,
    );
  }
  const { namespace, model, version, request } = input;
  if (model === '') throw TesseraError.invalidArg('cache key: the model name is empty');
  if (version === '') throw TesseraError.invalidArg(`cache key: the resolved version of model '${model}' is empty`);
  if (namespace !== 'shared' && namespace.tenant === '') throw TesseraError.invalidArg('cache key: the tenant id is empty');
  const reason = uncacheableReason(request);
  if (reason !== undefined) throw TesseraError.invalidArg(`cache key: ${reason}`);

  const h = new FramedHash().string(CACHE_KEY_SCHEMA);
  if (namespace === 'shared') h.string('shared');
  else h.string('tenant').string(namespace.tenant);
  h.string(model).string(version);

  // Code-unit order, not localeCompare: the key must not depend on the process's locale.
  const inputs = inNameOrder(request.inputs) ? request.inputs : [...request.inputs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  h.count(inputs.length);
  for (const tensor of inputs) {
    h.string(tensor.name).string(tensor.datatype).count(tensor.shape.length);
    for (const dim of tensor.shape) h.number(dim);
    h.bytes(tensor.data);
  }

  const outputs = input.outputs ?? request.outputs;
  if (outputs === undefined || outputs.length === 0) {
    h.string('all-outputs').boolean(input.binaryOutputDefault);
  } else {
    h.string('listed-outputs').count(outputs.length);
    for (const output of outputs) {
      h.string(output.name).boolean(output.binaryData ?? input.binaryOutputDefault).number(output.classification ?? 0);
    }
  }

  const names = Object.keys(request.parameters)
    .filter((name) => !IGNORED.has(name))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  h.count(names.length);
  for (const name of names) {
    h.string(name);
    hashParameter(h, request.parameters[name] as ParameterValue);
  }

  const scope = namespace === 'shared' ? 'shared' : `tenant:${escapeSegment(namespace.tenant)}`;
  return `${prefix}cache:${scope}:${escapeSegment(model)}:${escapeSegment(version)}:{${h.hex()}}`;
}

function hashParameter(h: FramedHash, value: ParameterValue): void {
  switch (typeof value) {
    case 'string':
      h.string(value);
      return;
    case 'boolean':
      h.boolean(value);
      return;
    case 'bigint':
      h.bigint(value);
      return;
    default:
      h.number(value);
  }
}

/** Inputs usually come sorted (clients list INPUT0, INPUT1): then no sorted copy is made. */
function inNameOrder(inputs: CacheKeyInput['request']['inputs']): boolean {
  for (let i = 1; i < inputs.length; i++) if (!(inputs[i - 1]!.name < inputs[i]!.name)) return false;
  return true;
}

/** Names that encodeURIComponent leaves alone, and `*` is not among them: returned as they are. */
const UNESCAPED_SEGMENT = /^[A-Za-z0-9_.~-]*$/;

/** Percent-escapes everything but letters, digits and `-_.!~'()`, plus `*` (a SCAN glob character). */
function escapeSegment(text: string): string {
  if (UNESCAPED_SEGMENT.test(text)) return text;
  return encodeURIComponent(text).replace(/\*/g, '%2A');
}
