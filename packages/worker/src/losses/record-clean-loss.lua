--[[
  Records one clean sandbox loss (lost before any model command ran) in the fleet-wide ledger and answers how many
  distinct episodes lost a sandbox cleanly within the window ending now.

  KEYS[1]  ledger  sorted set: episode label -> Redis server ms of its latest clean loss
  ARGV[1]  label   the episode (run|episode|sample)
  ARGV[2]  window  ms
  ARGV[3]  keep    ms of history kept (older entries are trimmed; the key expires after it)

  Returns: { count in [now - window, now], now }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
local keep = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - keep))
redis.call('PEXPIRE', KEYS[1], keep)
return { redis.call('ZCOUNT', KEYS[1], now - window, now), now }
