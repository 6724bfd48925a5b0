--[[
  Fold a batch of results into a run's fidelity aggregate, exactly once per stream entry.
  KEYS[1] aggregate hash (cursor + counters)   KEYS[2] per-episode hash (label -> "bucket|compared|matched")
  ARGV[1] cursor the caller read from ('0' = none yet)   ARGV[2] new cursor (last stream id of the batch)
  ARGV[3] retention seconds   ARGV[4..] triples: label, value ("bucket|compared|matched"), unused
  Returns 1 when folded, 0 when another reader moved the cursor first (the caller re-reads and tries again).
  A label already folded (a replaced result) gives back its old counts before the new ones are added, so the
  aggregate always describes each episode's latest result.
]]
local current = redis.call('HGET', KEYS[1], 'cursor') or '0'
if current ~= ARGV[1] then return 0 end
local function apply(value, sign)
  local bucket, compared, matched = string.match(value, '^([^|]*)|(%d+)|(%d+)$')
  if not bucket then return end
  redis.call('HINCRBY', KEYS[1], 'episodes', sign)
  redis.call('HINCRBY', KEYS[1], 'bucket:' .. bucket, sign)
  redis.call('HINCRBY', KEYS[1], 'steps_compared', sign * tonumber(compared))
  redis.call('HINCRBY', KEYS[1], 'steps_matched', sign * tonumber(matched))
end
for i = 4, #ARGV, 3 do
  local label, value = ARGV[i], ARGV[i + 1]
  local old = redis.call('HGET', KEYS[2], label)
  if old then apply(old, -1) end
  redis.call('HSET', KEYS[2], label, value)
  apply(value, 1)
end
redis.call('HSET', KEYS[1], 'cursor', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 1
