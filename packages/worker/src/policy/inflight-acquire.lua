--[[
  Take one inflight slot of a policy endpoint, fleet-wide, if one is free.
  KEYS[1] slots: sorted set, member = holder token, score = the slot's expiry (ms, Redis server clock)
  ARGV[1] holder token   ARGV[2] limit   ARGV[3] slot ttl (ms)
  Returns {1, holders}            taken (or renewed: the token already held a slot)
          {0, holders, wait_ms}   all taken; wait_ms = time until the earliest slot expires
  Expired slots (a dead worker's) are dropped first: liveness is Redis time, never a worker's clock.
]]
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local holders = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or holders < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  -- The key outlives its latest slot and no more: an idle endpoint leaves nothing behind.
  if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
  return {1, redis.call('ZCARD', KEYS[1])}
end
local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, holders, math.max(0, tonumber(first[2]) - now)}
