/**
 * Every Redis key name of the gateway's tenants and rate limits, in one module.
 *
 * | Name                                  | Type | Content                                      |
 * |---------------------------------------|------|----------------------------------------------|
 * | `<prefix>{tenants}:tenants`           | hash | tenant id → Tenant JSON                      |
 * | `<prefix>{tenants}:keys`              | hash | key id → ApiKeyRecord JSON (revoked ones too) |
 * | `<prefix>{tenants}:key-hashes`        | hash | sha256 hex → key id, non-revoked keys only   |
 * | `<prefix>{tenant:<id>}:ratelimit`     | hash | token buckets r, e and time t (PEXPIREs)     |
 * | `<prefix>{tenants}:changed`           | pub/sub channel | "key-hash:<sha256 hex>" or "all": drop cached lookups |
 *
 * Redis Cluster: the tenant registry shares the tag `{tenants}` (one slot) so that a lookup is one Lua
 * script and admin writes are one MULTI; it is small and read mostly. Each tenant's bucket has its
 * own tag `{tenant:<id>}`, which spreads the hot, write-heavy rate-limit keys over all shards.
 */
export function tenantRegistryKeys(prefix: string): { tenants: string; keys: string; hashes: string; changed: string } {
  return {
    tenants: `${prefix}{tenants}:tenants`,
    keys: `${prefix}{tenants}:keys`,
    hashes: `${prefix}{tenants}:key-hashes`,
    changed: `${prefix}{tenants}:changed`,
  };
}

export function rateLimitKey(prefix: string, tenantId: string): string {
  return `${prefix}{tenant:${tenantId}}:ratelimit`;
}
