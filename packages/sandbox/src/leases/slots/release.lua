--[[
  Free a slot (after its sandbox was killed). A slot freed while acquirers wait publishes one of them, at random,
  on <base>slot-freed (supply/slot-waker.ts wakes it).
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  ARGV[2] ticket   ARGV[3] owner
  Returns 1 | 0 (someone else owns it now)
]]
--- @include "server-time"
--- @include "slot-keys"
--- @include "owned-by"
--- @include "forget"

local ticket, owner = ARGV[2], ARGV[3]
local key = leaseKey(ticket)
if redis.call('EXISTS', key) == 1 and not ownedBy(ticket, owner) then return 0 end
redis.call('DEL', key)
forget(ticket, false)
-- Wake one waiter so the freed slot is used at once, not at its next poll. One, not all: the others would
-- only race for the same slot. A hint, not a hand-over: the waiter still reserves like anyone else.
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
local waiter = redis.call('ZRANDMEMBER', KEYS[5])
if waiter then redis.call('PUBLISH', base .. 'slot-freed', waiter) end
return 1
