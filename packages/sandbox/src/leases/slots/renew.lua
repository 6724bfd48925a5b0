--[[
  Extend a lease by one TTL, only while it exists and is still the owner's: an expired lease is never resurrected.
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  ARGV[2] ticket   ARGV[3] owner   ARGV[4] ttl (ms)
  Returns 1 | 0 (lease gone or owned by someone else)
]]
--- @include "owned-by"
--- @include "extend"

local ticket, owner, ttl = ARGV[2], ARGV[3], tonumber(ARGV[4])
if not ownedBy(ticket, owner) then return 0 end
extend(ticket, ttl)
return 1
