--[[
  Which listed sandboxes to kill now. A listed sandbox is owned when its ticket's lease names it, or names the
  create call (label) that made it while that call is in flight. Unowned ones are killed once seen unowned for the
  grace (server time); records of sandboxes no longer listed are dropped.
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  ARGV[2] grace ms   ARGV[3] grace ms for sandboxes without a ticket   ARGV[4..] triples: sandbox, ticket, label
  Returns {sandbox...} to kill now
]]
--- @include "server-time"
--- @include "slot-keys"
--- @include "purge"

local grace, unlabelledGrace = tonumber(ARGV[2]), tonumber(ARGV[3])
purge()
local listed = {}
for i = 4, #ARGV, 3 do listed[ARGV[i]] = true end
-- Sandboxes no longer listed (killed meanwhile) need no grace record.
local seenBefore = redis.call('HKEYS', KEYS[7])
for _, sandbox in ipairs(seenBefore) do
  if not listed[sandbox] then redis.call('HDEL', KEYS[7], sandbox) end
end
local kill = {}
for i = 4, #ARGV, 3 do
  local sandbox, ticket, label = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local owned = false
  if ticket ~= '' then
    local fields = redis.call('HMGET', leaseKey(ticket), 'sandbox', 'label')
    owned = fields[1] == sandbox or (fields[1] == '' and fields[2] == label)
  end
  if owned then
    redis.call('HDEL', KEYS[7], sandbox)
  else
    redis.call('HSETNX', KEYS[7], sandbox, now)
    local seen = tonumber(redis.call('HGET', KEYS[7], sandbox))
    local wait = grace
    if ticket == '' then wait = unlabelledGrace end
    if now - seen >= wait then kill[#kill + 1] = sandbox end
  end
end
return kill
