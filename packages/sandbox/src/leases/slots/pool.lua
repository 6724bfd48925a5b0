--[[
  The warm pool (after a purge).
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  Returns flat {ticket, "spec<TAB>state", ...}
]]
--- @include "purge"

purge()
return redis.call('HGETALL', KEYS[6])
