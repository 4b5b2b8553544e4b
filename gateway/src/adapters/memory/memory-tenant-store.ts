/**
 * TenantStore in process memory: for embedded mode (no Redis) and tests. One gateway only: tenants
 * and keys created through the admin API live as long as the process.
 */
import type { ApiKeyRecord, Tenant, TenantStore } from '../../core/ports/index.js';

export function createMemoryTenantStore(): TenantStore {
  const tenants = new Map<string, Tenant>();
  const keys = new Map<string, ApiKeyRecord>();
  const byHash = new Map<string, string>();

  return {
    async findByKeyHash(hash) {
      const keyId = byHash.get(hash);
      const key = keyId === undefined ? undefined : keys.get(keyId);
      if (key === undefined || key.revoked) return undefined;
      const tenant = tenants.get(key.tenantId);
      return tenant === undefined ? undefined : { tenant, key };
    },
    async getTenant(id) {
      return tenants.get(id);
    },
    async listTenants() {
      return [...tenants.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
    },
    async putTenant(tenant) {
      tenants.set(tenant.id, { ...tenant });
    },
    async deleteTenant(id) {
      tenants.delete(id);
      for (const [keyId, key] of keys) {
        if (key.tenantId === id) {
          keys.delete(keyId);
          byHash.delete(key.hash);
        }
      }
    },
    async putKey(record) {
      const previous = keys.get(record.id);
      if (previous !== undefined) byHash.delete(previous.hash);
      keys.set(record.id, { ...record });
      byHash.set(record.hash, record.id);
    },
    async revokeKey(keyId) {
      const key = keys.get(keyId);
      if (key === undefined || key.revoked) return false;
      keys.set(keyId, { ...key, revoked: true });
      byHash.delete(key.hash);
      return true;
    },
    async listKeys(tenantId) {
      return [...keys.values()].filter((k) => k.tenantId === tenantId).sort((a, b) => a.createdAt - b.createdAt);
    },
  };
}
