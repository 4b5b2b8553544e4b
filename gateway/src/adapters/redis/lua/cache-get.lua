--[[
  cache-get.lua: a response-cache entry and how long Redis will still keep it, read at one instant.
  The gateway's in-process cache (L1) keeps a copy only until then, so it can never serve an entry
  Redis has already expired; reading both at once means the TTL is the one of the value read, not
  of a value another gateway wrote between two separate commands.

  KEYS[1]  the entry's key (named by shared/src/cache-key)

  Returns { value (false when there is none), PTTL in ms (-2: no key, -1: no expiry) }.
]]
return { redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]) }
