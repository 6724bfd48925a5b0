--[[
  A sandbox target (a veFaaS function + route) failed, as the whole fleet sees it. A target that keeps answering
  errors or 429s is drained (not picked) for a while, then tried again; each drain in a row lasts twice as long as
  the one before (up to a maximum). All durations are key TTLs on Redis's clock.
  KEYS[1] failures counter (TTL = the failure window)   KEYS[2] drained flag (TTL = drain time)
  KEYS[3] drains in a row (TTL = 10 × max drain)
  ARGV[1] threshold (failures in the window that drain it)   ARGV[2] window ms   ARGV[3] first drain ms
  ARGV[4] max drain ms
  Returns the drain ms just set, or 0
]]
local threshold, window, first, max = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then redis.call('PEXPIRE', KEYS[1], window) end
if failures < threshold or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local drains = redis.call('INCR', KEYS[3])
redis.call('PEXPIRE', KEYS[3], 10 * max)
local drain = math.min(max, first * 2 ^ (drains - 1))
redis.call('SET', KEYS[2], '1', 'PX', math.floor(drain))
redis.call('DEL', KEYS[1])
return math.floor(drain)
