--- @include "server-time"
--- @include "slot-keys"
--- @include "split-tabs"
--- @include "set-fields"
--- @include "extend"
--- @include "forget"

-- Claims a ready warm sandbox of `spec` ('*' = any, the most recently readied) for `owner`: {1,ticket,{fields}}, or
-- {0} when none is left. `fields` (name -> value) are set on its lease.
local function claimOne(spec, owner, ttl, fields)
  local candidates = {}
  if spec == '*' then
    -- Any ready sandbox (to evict one for a cold create when the live cap is full), the most recently readied
    -- first: pools fill in the order jobs will come, so the newest is the one wanted last.
    local entries = redis.call('HGETALL', KEYS[6])
    for i = 1, #entries, 2 do
      local parts = split(entries[i + 1])
      if parts[2] == 'ready' then
        local readyAt = tonumber(redis.call('HGET', leaseKey(entries[i]), 'ready_at')) or 0
        candidates[#candidates + 1] = {entries[i], parts[1], readyAt}
      end
    end
    table.sort(candidates, function(a, b) return a[3] > b[3] end)
  end
  local index = 0
  while true do
    local ticket, ticketSpec
    if spec == '*' then
      index = index + 1
      if candidates[index] == nil then return {0} end
      ticket, ticketSpec = candidates[index][1], candidates[index][2]
      redis.call('LREM', readyKey(ticketSpec), 0, ticket)
    else
      ticket, ticketSpec = redis.call('LPOP', readyKey(spec)), spec
      if not ticket then return {0} end
    end
    if redis.call('EXISTS', leaseKey(ticket)) == 1 then
      redis.call('HDEL', KEYS[6], ticket)
      redis.call('HSET', leaseKey(ticket), 'owner', owner)
      setFields(leaseKey(ticket), fields)
      extend(ticket, ttl)
      local leaseFields = redis.call('HGETALL', leaseKey(ticket))
      for i = 1, #leaseFields, 2 do
        if leaseFields[i] == 'lifetime_ends_at' then
          leaseFields[#leaseFields + 1] = 'lifetime_left_ms'
          leaseFields[#leaseFields + 1] = tostring(tonumber(leaseFields[i + 1]) - now)
          break
        end
      end
      return {1, ticket, leaseFields}
    end
    forget(ticket, true)
  end
end
