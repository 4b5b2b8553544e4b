--[[
  token-bucket.lua: takes one request and N tensor elements from a tenant's two token buckets, or
  neither (all or nothing), atomically. Mirrors adapters/memory/token-bucket.ts.

  KEYS[1]  the tenant's bucket hash, <prefix>{tenant:<id>}:ratelimit (fields r, e, t)
  ARGV[1]  requests per second (0 = unlimited)
  ARGV[2]  request burst (bucket size)
  ARGV[3]  tensor elements per second (0 = unlimited)
  ARGV[4]  element burst
  ARGV[5]  elements this request carries

  Returns { allowed (1 or 0), retry_after_ms, remaining requests (floor), reset_seconds (ceil) }.
  Time is Redis's own (TIME), so gateways with skewed clocks share one timeline. The key expires
  once both buckets would be full again, so idle tenants cost no memory.
]]
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local eps = tonumber(ARGV[3])
local eburst = tonumber(ARGV[4])
local elements = tonumber(ARGV[5])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local state = redis.call('HMGET', KEYS[1], 'r', 'e', 't')
local requests = tonumber(state[1])
local elems = tonumber(state[2])
local at = tonumber(state[3])
if requests == nil or elems == nil or at == nil then
  requests = burst
  elems = eburst
else
  local elapsed = math.max(0, now - at)
  requests = math.min(burst, requests + elapsed * rps / 1000)
  elems = math.min(eburst, elems + elapsed * eps / 1000)
end

local need_requests = 0
if rps > 0 then need_requests = 1 end
local need_elements = 0
if eps > 0 then need_elements = elements end

local wait_ms = 0
if requests < need_requests then wait_ms = math.max(wait_ms, (need_requests - requests) * 1000 / rps) end
if elems < need_elements then wait_ms = math.max(wait_ms, (need_elements - elems) * 1000 / eps) end

local allowed = 0
if wait_ms == 0 then
  allowed = 1
  requests = requests - need_requests
  elems = elems - need_elements
end

-- Floats as text with full precision: HSET would otherwise store Lua's default %.14g.
redis.call('HSET', KEYS[1], 'r', string.format('%.17g', requests), 'e', string.format('%.17g', elems), 't', now)
local full_ms = 0
if rps > 0 then full_ms = math.max(full_ms, (burst - requests) * 1000 / rps) end
if eps > 0 then full_ms = math.max(full_ms, (eburst - elems) * 1000 / eps) end
redis.call('PEXPIRE', KEYS[1], math.ceil(full_ms) + 1000)

local reset = 0
if rps > 0 then reset = math.ceil((burst - requests) / rps) end
return { allowed, math.ceil(wait_ms), math.floor(requests), reset }
