--[[
  How many slots are live, starting, waited for, and how many warm sandboxes are ready and warming (after a purge).
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  Returns {live, starting, waiters, ready, warming}
]]
--- @include "purge"
--- @include "pool-counts"

purge()
local ready, warming = poolCounts()
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[5]), ready, warming}
