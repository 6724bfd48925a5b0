--[[
  Claim the oldest ready warm sandbox of a spec (spec '*' = any, the most recently readied: to evict the one
  wanted last) for owner.
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  ARGV[2] spec   ARGV[3] owner   ARGV[4] ttl (ms)   ARGV[5] lease fields to set, cjson {name: value}
  Returns {1,ticket,{lease fields}} | {0}
]]
--- @include "purge"
--- @include "claim-one"

purge()
return claimOne(ARGV[2], ARGV[3], tonumber(ARGV[4]), cjson.decode(ARGV[5]))
