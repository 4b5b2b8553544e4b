/**
 * Every Redis key and channel name of Tessera, in one module: the node writes the fleet's, the gateway
 * and its job workers the rest, and nobody spells a key by hand. The response cache's keys are built
 * from the same prefix by shared/src/cache-key (they carry a digest, so their layout lives there).
 *
 * Layout (default prefix `tessera:`, `DEFAULT_KEY_PREFIX`):
 *
 * | Name                                 | Type              | Written by          | Content                            |
 * |--------------------------------------|-------------------|---------------------|------------------------------------|
 * | `tessera:{fleet}:node:<nodeId>`      | string, PX ttlMs  | each node, ~1/s     | a `LoadReport` as JSON             |
 * | `tessera:{fleet}:events`             | pub/sub channel   | each node           | a `FleetEvent` as JSON             |
 * | `tessera:{tenant:<t>}:seq:<m>:<id>`  | string, PX ttl    | each gateway        | the node holding a sequence (JSON) |
 * | `tessera:{tenants}:tenants`          | hash              | admin API           | tenant id → Tenant JSON            |
 * | `tessera:{tenants}:keys`             | hash              | admin API           | key id → ApiKeyRecord JSON (revoked ones too) |
 * | `tessera:{tenants}:key-hashes`       | hash              | admin API           | sha256 hex → key id, non-revoked keys only |
 * | `tessera:{tenants}:changed`          | pub/sub channel   | admin API           | "key-hash:<sha256 hex>" or "all": drop cached lookups |
 * | `tessera:{tenant:<t>}:ratelimit`     | hash, PEXPIRE     | each gateway        | token buckets r, e and time t      |
 * | `tessera:sequence-id-key`            | string, SET NX    | first gateway       | the node-level sequence ids' HMAC key (hex) |
 * | `tessera:{jobs}:<queue>:…`           | BullMQ's keys     | gateway, job worker | the `infer` and `webhooks` queues  |
 * | `tessera:{jobs}:cancelled:<jobId>`   | string            | gateway             | a cancelled job's record           |
 * | `tessera:{jobs}:stored:<scope>`      | sorted set        | gateway, job worker | a tenant scope's jobs → drop time (ms) |
 *
 * - A node SETs its key with `PX ttlMs` on every report (about once a second, ttl about three
 *   intervals), so a node that dies without saying goodbye disappears by itself after `ttlMs`.
 * - A gateway lists the fleet with `SCAN 0 MATCH tessera:{fleet}:node:* ...` (see `nodeKeyPattern`)
 *   and reads the reports with GET/MGET; it learns joins and leaves between scans from the channel.
 * - On graceful shutdown a node DELetes its key and publishes `leave`.
 *
 * Redis Cluster: every fleet name carries the literal hash tag `{fleet}`. Redis hashes only the
 * part between the first `{` and the next `}`, so all fleet keys (and the channel, for sharded
 * pub/sub) live in ONE slot. We chose this because the gateway's read path needs it: a SCAN on the
 * one shard owning that slot finds every node, and one MGET (or a Lua script) can read all reports
 * at once, which cross-slot commands cannot do. The cost is that one shard carries all node
 * registrations: a few hundred small SETs per second, well within one Redis. Classic PUBLISH is
 * broadcast cluster-wide and ignores slots; SPUBLISH would follow the tag to the same shard.
 *
 * Sequence affinity (`sequenceAffinityKey`): the node a gateway sent a sequence's START to, so that any
 * gateway replica sends the rest of the sequence there. It is NOT in the `{fleet}` slot: it is written
 * per sequence request, so it takes the tenant's tag `{tenant:<t>}` (the slot of its rate-limit
 * bucket) and spreads over the shards like the rest of the per-tenant traffic. `<m>` is the model name
 * URI-encoded (so a `:` in it cannot make two keys equal); `<id>` is `u:<decimal>` for a numeric
 * sequence id and `s:<URI-encoded string>` for a string one (5 and "5" are different sequences, as in
 * Triton).
 *
 * Tenants and rate limits: the tenant registry shares the tag `{tenants}` (one slot) so that a lookup
 * is one Lua script and admin writes are one MULTI; it is small and read mostly. Each tenant's bucket
 * has its own tag `{tenant:<id>}`, which spreads the hot, write-heavy rate-limit keys over all shards.
 *
 * Jobs: BullMQ's keys are `<bullPrefix>:<queue>:…`; the prefix carries the `{jobs}` hash tag so that
 * every job key (both queues and our tombstones) sits in one Cluster slot, as BullMQ's Lua scripts need.
 *
 * The prefix is configurable so that several fleets (staging, prod) can share one Redis; it must
 * not contain `{`, `}` (they would move the hash tag) nor glob characters (they would break SCAN).
 */
import { TesseraError } from '../errors/index.js';

/** The default key prefix. */
export const DEFAULT_KEY_PREFIX = 'tessera:';

/** The Redis Cluster hash tag shared by every fleet key (see the module comment). */
export const FLEET_HASH_TAG = '{fleet}';

/**
 * Node ids appear verbatim in key names and logs: letters, digits, `.`, `_`, `-` and `:` (so that
 * hostnames, pod names and `host:port` all fit), 1 to 128 characters. Glob characters and braces
 * are refused because they would make `SCAN MATCH` and the hash tag ambiguous.
 */
export const NODE_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const NODE_ID_EXPECTED = "1 to 128 characters among letters, digits, '.', '_', '-', ':'";
const FORBIDDEN_PREFIX_CHARS = /[{}*?[\]\\\s]/;

export interface FleetKeysOptions {
  /** Prepended to every name; default `tessera:` (`DEFAULT_KEY_PREFIX`). */
  readonly prefix?: string;
}

export interface FleetKeys {
  readonly prefix: string;
  /** `tessera:{fleet}:node:<nodeId>`: the node's load report (string, with a TTL). */
  nodeKey(nodeId: string): string;
  /** `tessera:{fleet}:node:*`: the SCAN MATCH pattern that finds every node key. */
  readonly nodeKeyPattern: string;
  /** The node id of a node key, or undefined when the key is not one of ours. */
  nodeIdFromKey(key: string): string | undefined;
  /** `tessera:{fleet}:events`: the pub/sub channel of join and leave events. */
  readonly eventsChannel: string;
}

export function isValidNodeId(nodeId: string): boolean {
  return NODE_ID_PATTERN.test(nodeId);
}

export function assertValidNodeId(nodeId: string): void {
  if (!isValidNodeId(nodeId)) {
    throw TesseraError.invalidArg(
      `invalid node id ${JSON.stringify(nodeId)}: use ${NODE_ID_EXPECTED}`,
    );
  }
}

export function fleetKeys(options: FleetKeysOptions = {}): FleetKeys {
  const prefix = options.prefix ?? DEFAULT_KEY_PREFIX;
  if (FORBIDDEN_PREFIX_CHARS.test(prefix)) {
    throw TesseraError.invalidArg(
      `invalid Redis key prefix ${JSON.stringify(prefix)}: braces, glob characters and whitespace are not allowed`,
    );
  }
  const nodePrefix = `${prefix}${FLEET_HASH_TAG}:node:`;
  return {
    prefix,
    nodeKey: (nodeId) => {
      assertValidNodeId(nodeId);
      return nodePrefix + nodeId;
    },
    nodeKeyPattern: `${nodePrefix}*`,
    nodeIdFromKey: (key) => {
      if (!key.startsWith(nodePrefix)) return undefined;
      const nodeId = key.slice(nodePrefix.length);
      return isValidNodeId(nodeId) ? nodeId : undefined;
    },
    eventsChannel: `${prefix}${FLEET_HASH_TAG}:events`,
  };
}

/**
 * `<prefix>{tenant:<tenantId>}:seq:<model>:<sequenceId>` (see the module comment): the sequence
 * affinity key. `sequenceId` is the canonical form `u:<decimal>` or `s:<string>`; the model and the
 * string id are URI-encoded here.
 */
export function sequenceAffinityKey(prefix: string, tenantId: string, model: string, sequenceId: string): string {
  const id = sequenceId.startsWith('s:') ? `s:${encodeURIComponent(sequenceId.slice(2))}` : sequenceId;
  return `${prefix}{tenant:${tenantId}}:seq:${encodeURIComponent(model)}:${id}`;
}

export interface TenantRegistryKeys {
  readonly tenants: string;
  readonly keys: string;
  readonly hashes: string;
  readonly changed: string;
}

/** The tenant registry's hashes and its invalidation channel (see the module comment). */
export function tenantRegistryKeys(prefix: string): TenantRegistryKeys {
  return {
    tenants: `${prefix}{tenants}:tenants`,
    keys: `${prefix}{tenants}:keys`,
    hashes: `${prefix}{tenants}:key-hashes`,
    changed: `${prefix}{tenants}:changed`,
  };
}

/** `<prefix>{tenant:<tenantId>}:ratelimit`: one tenant's token buckets. */
export function rateLimitKey(prefix: string, tenantId: string): string {
  return `${prefix}{tenant:${tenantId}}:ratelimit`;
}

/** `<prefix>sequence-id-key`: the HMAC key of node-level sequence ids, shared by every gateway of one Redis. */
export function sequenceIdSecretKey(prefix: string): string {
  return `${prefix}sequence-id-key`;
}

/** The inference jobs' BullMQ queue. */
export const INFER_QUEUE = 'infer';
/** Webhook deliveries' BullMQ queue, retried with backoff independently of the job. */
export const WEBHOOK_QUEUE = 'webhooks';

export interface JobKeys {
  /** BullMQ's `prefix` option. */
  readonly bullPrefix: string;
  /** A cancelled job's record (the job itself is removed from BullMQ). */
  tombstone(jobId: string): string;
  /** Sorted set of one tenant scope's stored jobs: job id → when it may be dropped (ms). */
  stored(tenantScope: string): string;
}

export function jobKeys(keyPrefix = DEFAULT_KEY_PREFIX): JobKeys {
  const bullPrefix = `${keyPrefix.replace(/:$/, '')}:{jobs}`;
  return {
    bullPrefix,
    tombstone: (jobId) => `${bullPrefix}:cancelled:${jobId}`,
    stored: (tenantScope) => `${bullPrefix}:stored:${encodeURIComponent(tenantScope)}`,
  };
}
