--[[
  Drops the running entries of workers whose alive key Redis has expired (see start.lua).
  KEYS[1] active-jobs HASH job -> "worker<TAB>run" (every running episode of the fleet)
  ARGV[1] key base (same hash tag) for <base>run-active:<run>, <base>run-retrying:<run>, <base>worker-alive:<w>
  Returns how many entries were dropped
]]
--- @include "run-keys"

local entries = redis.call('HGETALL', KEYS[1])
local alive = {}
local dropped = 0
for i = 1, #entries, 2 do
  local job, entry = entries[i], entries[i + 1]
  local tab = string.find(entry, '\t', 1, true)
  local worker, run = string.sub(entry, 1, tab - 1), string.sub(entry, tab + 1)
  if alive[worker] == nil then alive[worker] = redis.call('EXISTS', base .. 'worker-alive:' .. worker) == 1 end
  if not alive[worker] then
    if redis.call('HGET', active(run), job) == worker then redis.call('HDEL', active(run), job) end
    redis.call('HDEL', KEYS[1], job)
    dropped = dropped + 1
  end
end
return dropped
