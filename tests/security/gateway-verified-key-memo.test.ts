/**
 * The gateway remembers the SHA-256 of keys it verified (core/auth/key-hash-memo.ts), so a steady
 * tenant does not hash its key per request. What a stranger could try against that: keep using a key
 * after it was revoked, use its own key to reach another tenant's identity, or fill the memo with
 * guessed keys. Real redis-server (the Redis tenant store) and a real gateway; no node is needed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/src/logging/index.js';
import { startRedisServer, type RedisServer } from '../../shared/test/support/index.js';
import { loadGatewayConfig } from '../../gateway/src/config/index.js';
import { startGateway, type RunningGateway } from '../../gateway/src/entry-node.js';
import { verifiedKeyHashes } from '../../gateway/src/core/auth/index.js';

const ADMIN = 'sec-key-memo-admin';
const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

describe('the verified-key memo (redis + gateway)', () => {
  let redis: RedisServer;
  let gateway: RunningGateway;

  const createTenant = async (id: string, allowedModels?: string[]): Promise<{ key: string; keyId: string }> => {
    const body = JSON.stringify({ id, tier: 'standard', ...(allowedModels === undefined ? {} : { allowedModels }) });
    expect((await fetch(`${gateway.url}/admin/tenants`, { method: 'POST', headers: admin, body })).status).toBe(201);
    const created = await fetch(`${gateway.url}/admin/tenants/${id}/keys`, { method: 'POST', headers: admin });
    expect(created.status).toBe(201);
    const { key, id: keyId } = (await created.json()) as { key: string; id: string };
    return { key, keyId };
  };
  const get = (key: string, path = '/v2') => fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    redis = await startRedisServer();
    gateway = await startGateway({
      config: loadGatewayConfig('{}'),
      redisUrl: redis.url,
      adminKey: ADMIN,
      port: 0,
      host: '127.0.0.1',
      logger: silentLogger,
    });
  });

  afterAll(async () => {
    await gateway?.close({ graceMs: 1000 });
    await redis?.stop();
  });

  it('refuses a revoked key at once, though its hash was remembered', async () => {
    const { key, keyId } = await createTenant('memo-revoked');
    expect((await get(key)).status).toBe(200);
    expect((await get(key)).status).toBe(200);
    expect((await fetch(`${gateway.url}/admin/keys/${keyId}`, { method: 'DELETE', headers: admin })).status).toBe(200);
    const refused = await get(key);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain(key);
  });

  it("maps each remembered key to its own tenant, never to another tenant's", async () => {
    const open = await createTenant('memo-open');
    const narrow = await createTenant('memo-narrow', ['some-other-model']);
    for (let i = 0; i < 3; i++) {
      expect((await get(open.key, '/v2/models/simple')).status).not.toBe(403);
      const denied = await get(narrow.key, '/v2/models/simple');
      expect(denied.status).toBe(403);
      expect(await denied.json()).toEqual({ error: "tenant 'memo-narrow' may not use model 'simple'" });
    }
  });

  it('does not remember guessed keys', async () => {
    const before = verifiedKeyHashes.size;
    for (let i = 0; i < 50; i++) expect((await get(`tsk_guess-${i}`)).status).toBe(401);
    expect(verifiedKeyHashes.size).toBe(before);
  });
});
