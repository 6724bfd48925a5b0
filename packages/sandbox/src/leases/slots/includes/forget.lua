--- @include "slot-keys"
--- @include "split-tabs"

-- Drops a ticket from every index; with doom, queues its sandbox (if it got one) for the reaper.
local function forget(ticket, doom)
  redis.call('ZREM', KEYS[1], ticket)
  redis.call('ZREM', KEYS[2], ticket)
  redis.call('ZREM', KEYS[5], ticket)
  local tail = redis.call('HGET', KEYS[3], ticket)
  if tail then
    local parts = split(tail)
    if doom and parts[2] ~= nil and parts[2] ~= '' then redis.call('SADD', KEYS[4], parts[1] .. '\t' .. parts[2]) end
    if redis.call('HDEL', KEYS[6], ticket) == 1 and parts[3] ~= nil then redis.call('LREM', readyKey(parts[3]), 0, ticket) end
    redis.call('HDEL', KEYS[3], ticket)
  else
    redis.call('HDEL', KEYS[6], ticket)
  end
end
