/**
 * TenantStore in Redis hashes (layout in shared/src/fleet/keys.ts), shared by every gateway.
 *
 * Lookups by key hash go through a small in-process cache:
 * - a found key is served from memory for `freshMs` (default 5000 ms) without asking Redis; one
 *   served past half of that also asks Redis again in the background, so a key in steady use never
 *   waits for Redis and is still checked against Redis at least every `freshMs`;
 * - concurrent lookups of one hash share one Redis call (a burst after an idle spell asks once);
 * - when Redis fails, an entry up to `staleIfErrorMs` old (default 10 min) is still served, so a
 *   Redis outage does not log out tenants that were active; unknown keys then get UNAVAILABLE (503).
 * Unknown hashes are never cached (a new key works at once).
 *
 * Staleness of a revocation or tenant change (disabled, new tier, deleted):
 * - on the gateway that made it (admin API): none, its own cache is updated at once;
 * - on the other gateways, with `subscriber`: about one pub/sub message later. Every change made
 *   through this store is published on `<prefix>{tenants}:changed` ("key-hash:<hash>" for a key,
 *   "all" for a tenant) and every subscribed store drops the matching entries. Messages are not
 *   queued while a subscriber is disconnected, so when it reconnects every entry is expired: the next
 *   lookup of each asks Redis again. Expired entries stay for stale-if-error: the subscriber often
 *   reconnects before the connection that runs lookups does, and dropping them then would fail
 *   every request of that gap with 503;
 * - otherwise (no subscriber, a message lost, a change written to Redis behind the gateways' back):
 *   at most `freshMs`.
 */
import type { Redis } from 'ioredis';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Logger } from '../../../../shared/src/logging/index.js';
import type { ApiKeyRecord, Tenant, TenantStore } from '../../core/ports/index.js';
import { DEFAULT_KEY_PREFIX, tenantRegistryKeys } from '../../../../shared/src/fleet/index.js';
import { runLua } from './lua-scripts.js';

export interface RedisTenantStoreOptions {
  readonly redis: Redis;
  /** Key prefix; default "tessera:". */
  readonly prefix?: string;
  readonly logger: Logger;
  /** How long a found key is trusted without Redis; default 5000 ms. */
  readonly freshMs?: number;
  /** How old a cached key may be when Redis fails; default 600000 ms. */
  readonly staleIfErrorMs?: number;
  /** Most cached lookups; default 10000 (oldest dropped first). */
  readonly maxCached?: number;
  /** Clock; default Date.now. */
  readonly now?: () => number;
  /**
   * A connection of its own for SUBSCRIBE (a subscribed connection can send nothing else), connected;
   * not closed by the store. Default none: other gateways see changes within `freshMs` only.
   */
  readonly subscriber?: Redis;
}

/** The pub/sub messages of the changes channel. */
const ALL = 'all';
const KEY_HASH = 'key-hash:';

type Found = { readonly tenant: Tenant; readonly key: ApiKeyRecord };

export function createRedisTenantStore(options: RedisTenantStoreOptions): TenantStore {
  const { redis, logger } = options;
  const names = tenantRegistryKeys(options.prefix ?? DEFAULT_KEY_PREFIX);
  const freshMs = options.freshMs ?? 5000;
  const staleIfErrorMs = options.staleIfErrorMs ?? 600_000;
  const maxCached = options.maxCached ?? 10_000;
  const now = options.now ?? Date.now;
  /** `expired`: not served as fresh any more (changes may have been missed), still usable if Redis fails. */
  const cache = new Map<string, { found: Found; at: number; expired: boolean; refreshing?: boolean }>();

  const remember = (hash: string, found: Found): void => {
    cache.delete(hash);
    cache.set(hash, { found, at: now(), expired: false });
    if (cache.size > maxCached) cache.delete(cache.keys().next().value as string);
  };

  const parse = <T>(json: string | null): T | undefined => (json === null ? undefined : (JSON.parse(json) as T));

  /** Tells the other gateways; a failed publish leaves them the `freshMs` bound, it fails nothing. */
  const announce = async (message: string): Promise<void> => {
    try {
      await redis.publish(names.changed, message);
    } catch (error) {
      logger.warn('tenant store: could not announce a change to the other gateways; they see it within freshMs', {
        freshMs,
        error: (error as Error).message,
      });
    }
  };

  /**
   * Bumped by every invalidation. A lookup answered from Redis is cached only if none came while it
   * was in flight: its reply and the change's message travel on different connections, so the reply
   * may hold what the message just invalidated.
   */
  let generation = 0;
  const invalidate = (hash?: string): void => {
    generation += 1;
    if (hash === undefined) cache.clear();
    else cache.delete(hash);
  };
  const expireAll = (): void => {
    generation += 1;
    for (const entry of cache.values()) entry.expired = true;
  };

  const { subscriber } = options;
  if (subscriber !== undefined) {
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== names.changed) return;
      invalidate(message.startsWith(KEY_HASH) ? message.slice(KEY_HASH.length) : undefined);
    });
    // Messages sent while this connection was down are lost: ask Redis again after a reconnect.
    subscriber.on('ready', expireAll);
    subscriber.subscribe(names.changed).catch((error: unknown) => {
      logger.warn('tenant store: cannot subscribe to tenant changes; other gateways\' changes are seen within freshMs', {
        freshMs,
        error: (error as Error).message,
      });
    });
  }

  const listKeys = async (tenantId: string): Promise<ApiKeyRecord[]> => {
    const all = await redis.hgetall(names.keys);
    return Object.values(all)
      .map((json) => JSON.parse(json) as ApiKeyRecord)
      .filter((k) => k.tenantId === tenantId)
      .sort((a, b) => a.createdAt - b.createdAt);
  };

  /**
   * Lookups in flight by hash; entries live only while Redis is asked, so guessed keys cannot grow it.
   * A flight asked before an invalidation is not joined after it: a revoked key must fail at once.
   */
  const inFlight = new Map<string, { answer: Promise<Found | undefined>; generation: number }>();
  const lookupShared = (hash: string): Promise<Found | undefined> => {
    const flight = inFlight.get(hash);
    if (flight !== undefined && flight.generation === generation) return flight.answer;
    const started = { answer: lookup(hash), generation };
    inFlight.set(hash, started);
    const settle = (): void => {
      if (inFlight.get(hash) === started) inFlight.delete(hash);
    };
    started.answer.then(settle, settle);
    return started.answer;
  };

  const lookup = async (hash: string): Promise<Found | undefined> => {
    const cached = cache.get(hash);
    const asked = generation;
    let reply: unknown;
    try {
      reply = await runLua(redis, 'find-key', [names.hashes, names.keys, names.tenants], [hash]);
    } catch (error) {
      if (cached !== undefined && now() - cached.at < staleIfErrorMs) {
        logger.warn('tenant store: Redis failed, serving a cached key lookup', { tenant: cached.found.tenant.id, error: (error as Error).message });
        return cached.found;
      }
      throw TesseraError.unavailable(`the tenant store is unavailable: ${(error as Error).message}`);
    }
    if (!Array.isArray(reply) || reply.length !== 2) {
      cache.delete(hash);
      return undefined;
    }
    const found = { key: JSON.parse(String(reply[0])) as ApiKeyRecord, tenant: JSON.parse(String(reply[1])) as Tenant };
    if (found.key.revoked) {
      cache.delete(hash);
      return undefined;
    }
    if (generation === asked) remember(hash, found);
    return found;
  };

  return {
    async findByKeyHash(hash) {
      const cached = cache.get(hash);
      if (cached !== undefined && !cached.expired) {
        const age = now() - cached.at;
        if (age < freshMs) {
          // Past half its life: checked again once, off the request path (a failure keeps the entry as it is).
          if (age >= freshMs / 2 && cached.refreshing !== true) {
            cached.refreshing = true;
            lookupShared(hash).catch(() => undefined);
          }
          return cached.found;
        }
      }
      return lookupShared(hash);
    },
    async getTenant(id) {
      return parse<Tenant>(await redis.hget(names.tenants, id));
    },
    async listTenants() {
      const all = await redis.hgetall(names.tenants);
      return Object.values(all)
        .map((json) => JSON.parse(json) as Tenant)
        .sort((a, b) => (a.id < b.id ? -1 : 1));
    },
    async putTenant(tenant) {
      await redis.hset(names.tenants, tenant.id, JSON.stringify(tenant));
      invalidate();
      await announce(ALL);
    },
    async deleteTenant(id) {
      const keys = await listKeys(id);
      const tx = redis.multi().hdel(names.tenants, id);
      for (const key of keys) tx.hdel(names.keys, key.id).hdel(names.hashes, key.hash);
      await tx.exec();
      invalidate();
      await announce(ALL);
    },
    async putKey(record) {
      const tx = redis.multi().hset(names.keys, record.id, JSON.stringify(record));
      if (record.revoked) tx.hdel(names.hashes, record.hash);
      else tx.hset(names.hashes, record.hash, record.id);
      await tx.exec();
      if (record.revoked) {
        invalidate(record.hash);
        await announce(KEY_HASH + record.hash);
      }
    },
    async revokeKey(keyId) {
      const record = parse<ApiKeyRecord>(await redis.hget(names.keys, keyId));
      if (record === undefined || record.revoked) return false;
      await redis.multi().hset(names.keys, keyId, JSON.stringify({ ...record, revoked: true })).hdel(names.hashes, record.hash).exec();
      invalidate(record.hash);
      await announce(KEY_HASH + record.hash);
      return true;
    },
    listKeys,
  };
}
