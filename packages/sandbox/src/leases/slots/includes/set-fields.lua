--- @include "server-time"

-- Lease fields (a table name -> string, decoded from the caller's cjson argument) onto a lease hash. A warm
-- sandbox's remaining platform lifetime comes as a duration (`lifetime_left_ms`, measured on the writer's own
-- clock) and is kept as a point in server time (`lifetime_ends_at`); a claim hands back what is left then. So a
-- claimer on another machine learns when the lifetime ends without comparing two machines' clocks.
local function setFields(key, fields)
  if fields == nil then return end
  for name, value in pairs(fields) do
    if name == 'lifetime_left_ms' then
      redis.call('HSET', key, 'lifetime_ends_at', now + tonumber(value))
    else
      redis.call('HSET', key, name, value)
    end
  end
end
