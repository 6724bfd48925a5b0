--- @include "server-time"
--- @include "slot-keys"

-- One more TTL for a lease and its index entries.
local function extend(ticket, ttl)
  redis.call('PEXPIRE', leaseKey(ticket), ttl)
  redis.call('ZADD', KEYS[1], now + ttl, ticket)
  if redis.call('ZSCORE', KEYS[2], ticket) then redis.call('ZADD', KEYS[2], now + ttl, ticket) end
end
