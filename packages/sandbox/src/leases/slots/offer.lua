--[[
  A warm sandbox is ready: into the pool of its spec.
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  ARGV[2] ticket   ARGV[3] owner   ARGV[4] spec
  Returns 1 | 0 (the lease is someone else's or gone)
]]
--- @include "server-time"
--- @include "slot-keys"
--- @include "owned-by"

local ticket, owner, spec = ARGV[2], ARGV[3], ARGV[4]
if not ownedBy(ticket, owner) then return 0 end
redis.call('HSET', KEYS[6], ticket, spec .. '\tready')
redis.call('HSET', leaseKey(ticket), 'ready_at', now)
redis.call('RPUSH', readyKey(spec), ticket)
redis.call('ZREM', KEYS[2], ticket)
return 1
