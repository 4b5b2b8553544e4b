--[[
  find-key.lua: API-key hash → the key record and its tenant, in one round trip.

  KEYS[1]  <prefix>{tenants}:key-hashes   hash: sha256 hex → key id (only non-revoked keys)
  KEYS[2]  <prefix>{tenants}:keys         hash: key id → ApiKeyRecord JSON
  KEYS[3]  <prefix>{tenants}:tenants      hash: tenant id → Tenant JSON
  ARGV[1]  the sha256 hex of the presented key

  Returns { keyJson, tenantJson }, or an empty array when the hash, key or tenant is unknown.
  The three keys share the hash tag {tenants}, so this runs on one Redis Cluster shard.
]]
local key_id = redis.call('HGET', KEYS[1], ARGV[1])
if not key_id then return {} end
local key_json = redis.call('HGET', KEYS[2], key_id)
if not key_json then return {} end
local tenant_id = cjson.decode(key_json)['tenantId']
local tenant_json = redis.call('HGET', KEYS[3], tenant_id)
if not tenant_json then return {} end
return { key_json, tenant_json }
