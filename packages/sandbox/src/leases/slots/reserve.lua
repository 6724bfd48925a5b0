--[[
  Take a slot if the live and starting caps allow. A warm fill also yields to anyone waiting for a slot, and needs
  fewer than poolMax sandboxes in the pool ('pool') and fewer than specTarget of its spec ('spec').
  KEYS[1] leases  KEYS[2] starting  KEYS[3] tails  KEYS[4] doomed  KEYS[5] waiters  KEYS[6] pool  KEYS[7] orphans
          (every slot script takes these seven; what each holds: includes/slot-keys.lua)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  ARGV[2] the request, cjson:
          ticket owner ttl maxLive maxStarting target spec
          warm     {poolMax, specTarget}: a warm fill (absent: a slot for a job)
          claim    true: first claim a ready warm sandbox of spec, as claim.lua does ({2,…}: its slot, not a new one)
          waiter   {id, ttl}: the acquirer's waiter entry, added for ttl ms when no slot is granted (as wait.lua),
                   dropped when one is (as unwait.lua) — one round trip per attempt instead of three
          fields   {name: value}: lease fields to set (includes/set-fields.lua)
  Returns {1,'ok',live,starting} | {2,ticket,{lease fields}} | {0,'yield'|'pool'|'spec'|'live'|'starting',live,
          starting,readyIdle}
]]
--- @include "server-time"
--- @include "slot-keys"
--- @include "set-fields"
--- @include "purge"
--- @include "pool-counts"
--- @include "claim-one"

local request = cjson.decode(ARGV[2])
local ticket, owner, ttl = request.ticket, request.owner, tonumber(request.ttl)
local maxLive, maxStarting, warm = tonumber(request.maxLive), tonumber(request.maxStarting), request.warm ~= nil
local target, spec = request.target, request.spec
local claim, waiter = request.claim == true, request.waiter
purge()
if claim then
  local claimed = claimOne(spec, owner, ttl, request.fields)
  if claimed[1] == 1 then
    if waiter then redis.call('ZREM', KEYS[5], waiter.id) end
    return {2, claimed[2], claimed[3]}
  end
end
local live, starting = redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2])
local ready, warming, ofSpec = poolCounts(spec)
local function refuse(reason)
  if waiter then redis.call('ZADD', KEYS[5], now + tonumber(waiter.ttl), waiter.id) end
  return {0, reason, live, starting, ready}
end
if warm then
  -- The warm pool only uses capacity nobody is waiting for, and never grows past its bounds.
  if redis.call('ZCARD', KEYS[5]) > 0 then return refuse('yield') end
  if ready + warming >= tonumber(request.warm.poolMax) then return refuse('pool') end
  if ofSpec >= tonumber(request.warm.specTarget) then return refuse('spec') end
end
if live >= maxLive then return refuse('live') end
if starting >= maxStarting then return refuse('starting') end
local key = leaseKey(ticket)
redis.call('HSET', key, 'owner', owner, 'ticket', ticket, 'target', target, 'spec', spec, 'sandbox', '')
setFields(key, request.fields)
redis.call('PEXPIRE', key, ttl)
redis.call('ZADD', KEYS[1], now + ttl, ticket)
redis.call('ZADD', KEYS[2], now + ttl, ticket)
redis.call('ZREM', KEYS[5], ticket)
if waiter then redis.call('ZREM', KEYS[5], waiter.id) end
redis.call('HSET', KEYS[3], ticket, target .. '\t\t' .. spec)
if warm then redis.call('HSET', KEYS[6], ticket, spec .. '\twarming') end
return {1, 'ok', live + 1, starting + 1, ready}
