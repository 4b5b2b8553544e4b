/**
 * TenantStore in Workers KV. Layout (all JSON, no TTL):
 *
 *   tenant:<tenantId>            → Tenant
 *   key:<keyId>                  → ApiKeyRecord
 *   hash:<sha256 hex>            → keyId               (the lookup on every request)
 *   tkey:<tenantId>:<keyId>      → ""                  (index: a tenant's keys, listed by prefix)
 *
 * KV is eventually consistent across locations (a write may take up to about 60 s to be seen
 * everywhere), so a revoked key can still pass at another location for that long; that is the
 * documented price of reading keys at the edge without a round trip to one region (docs/edge.md).
 * No cache of our own sits on top, so a revoke is never slower than KV itself.
 */
import type { ApiKeyRecord, Tenant, TenantStore } from '../../core/ports/index.js';
import type { KvNamespace } from './workers-bindings.js';

const TENANT = 'tenant:';
const KEY = 'key:';
const HASH = 'hash:';
const TENANT_KEY = 'tkey:';

async function getJson<T>(kv: KvNamespace, key: string): Promise<T | undefined> {
  const text = await kv.get(key, 'text');
  return text === null ? undefined : (JSON.parse(text) as T);
}

async function listNames(kv: KvNamespace, prefix: string): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await kv.list({ prefix, ...(cursor === undefined ? {} : { cursor }) });
    names.push(...page.keys.map((k) => k.name));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor !== undefined);
  return names;
}

export function createKvTenantStore(kv: KvNamespace): TenantStore {
  const store: TenantStore = {
    async findByKeyHash(hash) {
      const keyId = await kv.get(HASH + hash, 'text');
      if (keyId === null) return undefined;
      const key = await getJson<ApiKeyRecord>(kv, KEY + keyId);
      if (key === undefined || key.revoked || key.hash !== hash) return undefined;
      const tenant = await getJson<Tenant>(kv, TENANT + key.tenantId);
      return tenant === undefined ? undefined : { tenant, key };
    },
    getTenant: (id) => getJson<Tenant>(kv, TENANT + id),
    async listTenants() {
      const names = await listNames(kv, TENANT);
      const tenants = await Promise.all(names.map((name) => getJson<Tenant>(kv, name)));
      return tenants.filter((t): t is Tenant => t !== undefined).sort((a, b) => (a.id < b.id ? -1 : 1));
    },
    async putTenant(tenant) {
      await kv.put(TENANT + tenant.id, JSON.stringify(tenant));
    },
    async deleteTenant(id) {
      for (const key of await store.listKeys(id)) {
        await kv.delete(HASH + key.hash);
        await kv.delete(KEY + key.id);
        await kv.delete(`${TENANT_KEY}${id}:${key.id}`);
      }
      await kv.delete(TENANT + id);
    },
    async putKey(record) {
      const previous = await getJson<ApiKeyRecord>(kv, KEY + record.id);
      if (previous !== undefined && previous.hash !== record.hash) await kv.delete(HASH + previous.hash);
      await kv.put(KEY + record.id, JSON.stringify(record));
      await kv.put(`${TENANT_KEY}${record.tenantId}:${record.id}`, '');
      if (record.revoked) await kv.delete(HASH + record.hash);
      else await kv.put(HASH + record.hash, record.id);
    },
    async revokeKey(keyId) {
      const key = await getJson<ApiKeyRecord>(kv, KEY + keyId);
      if (key === undefined || key.revoked) return false;
      await kv.put(KEY + keyId, JSON.stringify({ ...key, revoked: true }));
      await kv.delete(HASH + key.hash);
      return true;
    },
    async listKeys(tenantId) {
      const prefix = `${TENANT_KEY}${tenantId}:`;
      const ids = (await listNames(kv, prefix)).map((name) => name.slice(prefix.length));
      const keys = await Promise.all(ids.map((id) => getJson<ApiKeyRecord>(kv, KEY + id)));
      return keys.filter((k): k is ApiKeyRecord => k !== undefined).sort((a, b) => a.createdAt - b.createdAt);
    },
  };
  return store;
}
