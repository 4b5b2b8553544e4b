/**
 * Puts the config file's tenants and keys into a TenantStore at start, without undoing the admin
 * API's work: a tenant already in the store keeps its stored form, and a key id already stored
 * (revoked ones included) is left alone, so a key revoked through the admin API stays revoked across
 * restarts. A deleted file tenant comes back at the next start: remove it from the file instead.
 */
import type { Tenant, TenantStore } from '../ports/index.js';
import { newTenantGeneration } from './tenant-scope.js';

export interface SeedTenant {
  readonly id: string;
  readonly name: string;
  readonly tier: string;
  readonly allowedModels?: readonly string[];
  readonly keys: readonly { readonly id: string; readonly hash: string }[];
}

export async function seedTenants(store: TenantStore, tenants: readonly SeedTenant[], now: number): Promise<void> {
  for (const seed of tenants) {
    if ((await store.getTenant(seed.id)) === undefined) {
      const tenant: Tenant = {
        id: seed.id,
        name: seed.name,
        tier: seed.tier,
        generation: newTenantGeneration(),
        ...(seed.allowedModels === undefined ? {} : { allowedModels: seed.allowedModels }),
      };
      await store.putTenant(tenant);
    }
    const stored = new Set((await store.listKeys(seed.id)).map((k) => k.id));
    for (const key of seed.keys) {
      if (!stored.has(key.id)) await store.putKey({ id: key.id, tenantId: seed.id, hash: key.hash, createdAt: now, revoked: false });
    }
  }
}
