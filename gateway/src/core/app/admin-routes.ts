/**
 * The admin API, under `/admin/`, protected by the admin key (never a tenant key):
 *
 * - POST   /admin/tenants                {id?, name?, tier, allowedModels?, disabled?} → 201 the tenant
 * - GET    /admin/tenants                → {tenants: [{...tenant, keys: [{id, createdAt, revoked}]}]}
 * - GET    /admin/tenants/:id            → the tenant with its keys (404 when unknown)
 * - DELETE /admin/tenants/:id            → revokes its keys, deletes it → {deleted: id}; its cache entries,
 *                                          jobs, idempotency keys and sequence bindings become unreachable
 *                                          (they were scoped by its generation) and expire by their TTLs
 * - POST   /admin/tenants/:id/keys       → 201 {id, tenantId, key, createdAt}: the plaintext key, shown
 *                                          this once (only its sha256 is stored); key ids are generated
 * - DELETE /admin/keys/:id               → {revoked: id} (404 when unknown or already revoked)
 */
import type { Hono } from 'hono';
import { TesseraError } from '../../../../shared/src/errors/index.js';
import type { Logger } from '../../../../shared/src/logging/logger-interface.js';
import { IDENTIFIER_PATTERN } from '../../config/index.js';
import type { ApiKeyRecord, Tenant, TenantStore, Tier } from '../ports/index.js';
import { generateApiKey, generateId, newTenantGeneration, sha256Hex } from '../auth/index.js';
import { jsonResponse, readBodyLimited } from '../http/index.js';
import type { AppEnv } from './app-env.js';

const MAX_ADMIN_BODY = 64 * 1024;

export interface AdminRoutesContext {
  readonly tenants: TenantStore;
  readonly tiers: Readonly<Record<string, Tier>>;
  readonly logger: Logger;
  readonly now: () => number;
}

async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  const body = await readBodyLimited(request, MAX_ADMIN_BODY);
  if (body.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(body));
  } catch (error) {
    throw TesseraError.invalidArg(`the request body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw TesseraError.invalidArg('the request body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

function optionalId(value: unknown, what: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !IDENTIFIER_PATTERN.test(value)) {
    throw TesseraError.invalidArg(`${what} must be 1-64 letters, digits, '.', '_' or '-'`);
  }
  return value;
}

function publicKey(record: ApiKeyRecord): { id: string; createdAt: number; revoked: boolean } {
  return { id: record.id, createdAt: record.createdAt, revoked: record.revoked };
}

/** A tenant as the API shows it: never its webhook secret. */
function publicTenant(tenant: Tenant): Omit<Tenant, 'webhookSecret' | 'generation'> {
  const { webhookSecret: _secret, generation: _generation, ...rest } = tenant;
  return rest;
}

export function registerAdminRoutes(app: Hono<AppEnv>, ctx: AdminRoutesContext): void {
  const { tenants, tiers, logger } = ctx;

  async function tenantWithKeys(tenant: Tenant): Promise<unknown> {
    return { ...publicTenant(tenant), keys: (await tenants.listKeys(tenant.id)).map(publicKey) };
  }

  async function requireTenant(id: string): Promise<Tenant> {
    const tenant = await tenants.getTenant(id);
    if (tenant === undefined) throw TesseraError.notFound(`unknown tenant '${id}'`);
    return tenant;
  }

  app.post('/admin/tenants', async (c) => {
    const body = await readJsonObject(c.req.raw);
    const id = optionalId(body.id, "'id'") ?? generateId('t_');
    const tier = body.tier;
    if (typeof tier !== 'string' || !Object.hasOwn(tiers, tier)) {
      throw TesseraError.invalidArg(`'tier' must be one of ${Object.keys(tiers).join(', ')}, got ${JSON.stringify(tier)}`);
    }
    if (body.name !== undefined && typeof body.name !== 'string') throw TesseraError.invalidArg("'name' must be a string");
    const allowed = body.allowedModels;
    if (allowed !== undefined && (!Array.isArray(allowed) || allowed.some((m) => typeof m !== 'string' || m === ''))) {
      throw TesseraError.invalidArg("'allowedModels' must be an array of model names");
    }
    if (body.disabled !== undefined && typeof body.disabled !== 'boolean') throw TesseraError.invalidArg("'disabled' must be a boolean");
    if ((await tenants.getTenant(id)) !== undefined) throw TesseraError.alreadyExists(`tenant '${id}' already exists`);
    const tenant: Tenant = {
      id,
      name: (body.name as string | undefined) ?? id,
      tier,
      // A new generation: nothing a deleted tenant of the same id left behind is reachable (tenant-scope.ts).
      generation: newTenantGeneration(),
      ...(allowed === undefined ? {} : { allowedModels: allowed as string[] }),
      ...(body.disabled === true ? { disabled: true } : {}),
    };
    await tenants.putTenant(tenant);
    logger.info('tenant created', { tenant: id, tier });
    return jsonResponse(publicTenant(tenant), 201);
  });

  app.get('/admin/tenants', async () => {
    const list = await tenants.listTenants();
    return jsonResponse({ tenants: await Promise.all(list.map(tenantWithKeys)) });
  });

  app.get('/admin/tenants/:id', async (c) => jsonResponse(await tenantWithKeys(await requireTenant(c.req.param('id') ?? ''))));

  app.delete('/admin/tenants/:id', async (c) => {
    const tenant = await requireTenant(c.req.param('id') ?? '');
    for (const key of await tenants.listKeys(tenant.id)) {
      if (!key.revoked) await tenants.revokeKey(key.id);
    }
    await tenants.deleteTenant(tenant.id);
    logger.info('tenant deleted', { tenant: tenant.id });
    return jsonResponse({ deleted: tenant.id });
  });

  app.post('/admin/tenants/:id/keys', async (c) => {
    const tenant = await requireTenant(c.req.param('id') ?? '');
    const keyId = generateId('k_');
    const key = generateApiKey();
    const record: ApiKeyRecord = { id: keyId, tenantId: tenant.id, hash: await sha256Hex(key), createdAt: ctx.now(), revoked: false };
    await tenants.putKey(record);
    logger.info('api key created', { tenant: tenant.id, keyId });
    return jsonResponse({ id: keyId, tenantId: tenant.id, key, createdAt: record.createdAt }, 201);
  });

  app.delete('/admin/keys/:id', async (c) => {
    const keyId = c.req.param('id') ?? '';
    if (!(await tenants.revokeKey(keyId))) throw TesseraError.notFound(`unknown or already revoked key '${keyId}'`);
    logger.info('api key revoked', { keyId });
    return jsonResponse({ revoked: keyId });
  });
}
