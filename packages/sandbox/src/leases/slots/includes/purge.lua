--- @include "server-time"
--- @include "slot-keys"
--- @include "forget"

-- Index entries past their expiry whose lease key is gone: the owner stopped renewing (crashed, hung).
local function purge()
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 500)
  for _, ticket in ipairs(due) do
    if redis.call('EXISTS', leaseKey(ticket)) == 0 then forget(ticket, true) end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
end
