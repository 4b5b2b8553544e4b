/**
 * A tenant's scope: the string every per-tenant key is built from (cache namespace, job ownership,
 * Idempotency-Key job ids, sequence bindings and node-side sequence ids). It is the id plus the
 * tenant's generation, so deleting a tenant makes all of that unreachable at once, and a tenant
 * re-created under the same id (a new generation) starts empty. `~` is not allowed in tenant ids
 * (config/load-gateway-config.ts IDENTIFIER_PATTERN), so no id can spell another tenant's scope.
 */
import type { Tenant } from '../ports/index.js';
import { generateId } from './api-key.js';

export function tenantScope(tenant: Pick<Tenant, 'id' | 'generation'>): string {
  return tenant.generation === undefined || tenant.generation === '' ? tenant.id : `${tenant.id}~${tenant.generation}`;
}

/** A fresh generation for a tenant being created. */
export function newTenantGeneration(): string {
  return generateId('g');
}
