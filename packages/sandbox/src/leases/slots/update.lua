--[[
  Record what a slot holds (its target, sandbox and spec, and lease fields); leaveStarting moves it out of the
  starting cap.
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  ARGV[2] ticket   ARGV[3] owner
  ARGV[4] the update, cjson: target sandbox spec, leaveStarting (true|absent), fields {name: value}
  Returns 1 | 0 (the lease is someone else's or gone)
]]
--- @include "slot-keys"
--- @include "owned-by"
--- @include "set-fields"

local ticket, owner = ARGV[2], ARGV[3]
if not ownedBy(ticket, owner) then return 0 end
local update = cjson.decode(ARGV[4])
local target, sandbox, spec = update.target, update.sandbox, update.spec
local key = leaseKey(ticket)
redis.call('HSET', key, 'target', target, 'sandbox', sandbox, 'spec', spec)
setFields(key, update.fields)
redis.call('HSET', KEYS[3], ticket, target .. '\t' .. sandbox .. '\t' .. spec)
if update.leaveStarting == true then redis.call('ZREM', KEYS[2], ticket) end
return 1
