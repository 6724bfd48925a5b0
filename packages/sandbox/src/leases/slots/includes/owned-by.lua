--- @include "slot-keys"

local function ownedBy(ticket, owner)
  return redis.call('HGET', leaseKey(ticket), 'owner') == owner
end
