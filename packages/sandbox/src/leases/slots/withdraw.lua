--[[
  Take an idle warm sandbox back out of the pool (to kill it).
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  ARGV[2] ticket   ARGV[3] owner
  Returns 1 | 0 (claimed meanwhile, or not the owner's)
]]
--- @include "slot-keys"
--- @include "split-tabs"
--- @include "owned-by"

local ticket, owner = ARGV[2], ARGV[3]
if not ownedBy(ticket, owner) then return 0 end
local entry = redis.call('HGET', KEYS[6], ticket)
if not entry then return 0 end
local parts = split(entry)
redis.call('HDEL', KEYS[6], ticket)
redis.call('LREM', readyKey(parts[1]), 0, ticket)
return 1
