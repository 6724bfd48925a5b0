--[[
  Keep a held slot alive while its request runs (heartbeat).
  KEYS[1] slots sorted set   ARGV[1] holder token   ARGV[2] slot ttl (ms)
  Returns 1 when the slot was still held, 0 when it had expired (it is put back: the request is in flight).
]]
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local ttl = tonumber(ARGV[2])
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
local key_ttl = redis.call('PTTL', KEYS[1])
if key_ttl < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
if held and tonumber(held) > now then return 1 end
return 0
