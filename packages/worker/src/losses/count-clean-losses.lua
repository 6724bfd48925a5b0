--[[
  How many distinct episodes lost a sandbox cleanly (before any model command ran) within `window` of a moment:
  the evidence of a platform outage around one episode's loss.

  KEYS[1]  ledger  sorted set: episode label -> Redis server ms of its latest clean loss
  ARGV[1]  at      ms (Redis server clock) of the loss in question; 0 = now
  ARGV[2]  window  ms
  ARGV[3]  except  an episode label not to count (the episode asking), or ''

  Returns: { count in [at - window, at + window] without `except`, now }
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local at = tonumber(ARGV[1])
if at == 0 then at = now end
local window = tonumber(ARGV[2])
local count = redis.call('ZCOUNT', KEYS[1], at - window, at + window)
if ARGV[3] ~= '' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
  if score and tonumber(score) >= at - window and tonumber(score) <= at + window then count = count - 1 end
end
return { count, now }
