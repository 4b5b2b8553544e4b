--[[
  token-bucket.lua: decides a batch of requests of ONE tenant against the tenant's two token buckets,
  in order, atomically. Each request takes one request token and its tensor elements, or neither (all
  or nothing). Deciding N requests in one call is exactly N single calls made at the same instant:
  request i sees the buckets as request i-1 left them. Mirrors adapters/memory/token-bucket.ts.

  KEYS[1]  the tenant's bucket hash, <prefix>{tenant:<id>}:ratelimit (fields r, e, t)
  ARGV[1]  N, the number of requests in this batch (>= 1; 0 is a lease renewal, below)
  then, for request i = 1..N, five values starting at ARGV[2 + 5 * (i - 1)]:
    requests per second (0 = unlimited), request burst (bucket size),
    tensor elements per second (0 = unlimited), element burst, elements this request carries

  then, optionally, two more values: a LEASE of up to that many request tokens and tensor elements,
    taken after the N requests (what the buckets hold, floored, up to what is asked; an unlimited
    bucket grants nothing). A gateway spends leased tokens locally (redis-rate-limiter.ts).

  N = 0 is a lease RENEWAL: one slot of five values (the limits; its elements value is ignored),
    then the lease pair (what to lease), then two more: the request tokens and tensor elements the
    gateway gives back (what it held when the call left; a full bucket keeps none of them). Nothing is
    taken and no decision answered: the reply is the 3 lease values alone.

  Returns 4 * N integers: for each request in order { allowed (1 or 0), retry_after_ms,
  remaining requests (floor), reset_seconds (ceil) }; with a lease, 3 more: { leased requests,
  leased elements, remaining requests (floor) after the lease }.
  Time is Redis's own (TIME), read once, so gateways with skewed clocks share one timeline. The key
  expires once both buckets would be full again, so idle tenants cost no memory.
]]
local n = tonumber(ARGV[1])

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local state = redis.call('HMGET', KEYS[1], 'r', 'e', 't')
local requests = tonumber(state[1])
local elems = tonumber(state[2])
local at = tonumber(state[3])
local fresh = requests == nil or elems == nil or at == nil

local renewal = n == 0
local slots = n
if renewal then slots = 1 end

local out = {}
local rps, burst, eps, eburst
for i = 1, slots do
  local base = 1 + 5 * (i - 1)
  rps = tonumber(ARGV[base + 1])
  burst = tonumber(ARGV[base + 2])
  eps = tonumber(ARGV[base + 3])
  eburst = tonumber(ARGV[base + 4])
  local elements = tonumber(ARGV[base + 5])

  -- Refill as a single call would: from nothing (a full bucket), or by the time since the last
  -- decision, which is 0 for every request after the first of the batch.
  if fresh then
    requests = burst
    elems = eburst
    fresh = false
  else
    local elapsed = math.max(0, now - at)
    requests = math.min(burst, requests + elapsed * rps / 1000)
    elems = math.min(eburst, elems + elapsed * eps / 1000)
  end
  at = now

  local need_requests = 0
  if rps > 0 and not renewal then need_requests = 1 end
  local need_elements = 0
  if eps > 0 and not renewal then need_elements = elements end

  local wait_ms = 0
  if requests < need_requests then wait_ms = math.max(wait_ms, (need_requests - requests) * 1000 / rps) end
  if elems < need_elements then wait_ms = math.max(wait_ms, (need_elements - elems) * 1000 / eps) end

  local allowed = 0
  if wait_ms == 0 then
    allowed = 1
    requests = requests - need_requests
    elems = elems - need_elements
  end

  if not renewal then
    local reset = 0
    if rps > 0 then reset = math.ceil((burst - requests) / rps) end
    out[#out + 1] = allowed
    out[#out + 1] = math.ceil(wait_ms)
    out[#out + 1] = math.floor(requests)
    out[#out + 1] = reset
  end
end

if renewal then
  requests = math.min(burst, requests + tonumber(ARGV[4 + 5 * slots]))
  elems = math.min(eburst, elems + tonumber(ARGV[5 + 5 * slots]))
end

if #ARGV >= 3 + 5 * slots then
  local want_requests = tonumber(ARGV[2 + 5 * slots])
  local want_elements = tonumber(ARGV[3 + 5 * slots])
  local leased_requests = 0
  local leased_elements = 0
  if rps > 0 then leased_requests = math.max(0, math.min(want_requests, math.floor(requests))) end
  if eps > 0 then leased_elements = math.max(0, math.min(want_elements, math.floor(elems))) end
  requests = requests - leased_requests
  elems = elems - leased_elements
  out[#out + 1] = leased_requests
  out[#out + 1] = leased_elements
  out[#out + 1] = math.floor(requests)
end

-- Floats as text with full precision (%.17g round-trips a double): HSET would otherwise store Lua's
-- default %.14g, and a batch must leave exactly what its N single calls would have left.
redis.call('HSET', KEYS[1], 'r', string.format('%.17g', requests), 'e', string.format('%.17g', elems), 't', now)
-- The expiry of the last request's limits, as the last of N single calls would have set it.
local full_ms = 0
if rps > 0 then full_ms = math.max(full_ms, (burst - requests) * 1000 / rps) end
if eps > 0 then full_ms = math.max(full_ms, (eburst - elems) * 1000 / eps) end
redis.call('PEXPIRE', KEYS[1], math.ceil(full_ms) + 1000)

return out
