--[[
  Fleet-wide sandbox slots: the live and starting caps, every sandbox's lease and the warm pool, decided in
  one atomic script with Redis's own clock (TIME), so no two machines' clocks are ever compared.

  A slot is a "ticket" (a random id taken before CreateSandbox is called). Its lease is the key
  <base>lease:<ticket>, a hash with a TTL: the slot is alive exactly as long as that key exists. The indexes
  below are kept in step by this script; an index entry whose lease key has expired is dropped by purge()
  (that is how a dead worker's slots free themselves), and the sandbox it named is queued for the reaper.

  KEYS[1] leases   ZSET ticket -> lease expiry (server ms)          live slots (counts toward the live cap)
  KEYS[2] starting ZSET ticket -> lease expiry                       slots still creating or starting
  KEYS[3] tails    HASH ticket -> "target<TAB>sandbox<TAB>spec"      what outlives the lease key (for the reaper)
  KEYS[4] doomed   SET  "target<TAB>sandbox"                         sandboxes whose lease expired: to be killed
  KEYS[5] waiters  ZSET ticket -> expiry                             acquirers waiting for a slot (warm fills yield)
  KEYS[6] pool     HASH ticket -> "spec<TAB>warming|ready"           the warm pool
  KEYS[7] orphans  HASH sandbox -> first time seen without an owner  (reaper grace, server ms)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
  ARGV[2] op; ARGV[3..] the op's arguments (see each op). Fields are passed as trailing name/value pairs.

  Ops and replies:
    reserve ticket owner ttl maxLive maxStarting warm(0|1) target spec poolMax specTarget claim(0|1) waiter waitTtl
            [f v]...
        -> {1,'ok',live,starting} | {2,ticket,{lease fields}} | {0,'yield'|'pool'|'spec'|'live'|'starting',live,
        starting,readyIdle}
        (a warm fill also needs fewer than poolMax sandboxes in the pool ('pool'), fewer than specTarget of its
        spec ('spec')). With claim=1 a ready warm sandbox of spec is claimed first, as `claim` does ({2,…}: its
        slot, not a new one). A non-empty waiter is the acquirer's waiter entry: added for waitTtl ms when no slot
        is granted (as `wait`), dropped when one is (as `unwait`) — one round trip per attempt instead of three.
    renew ticket owner ttl                      -> 1 | 0 (lease gone or owned by someone else; never resurrected)
    update ticket owner leaveStarting target sandbox spec [f v]...   -> 1 | 0
    release ticket owner                        -> 1 | 0 (someone else owns it now); a slot freed while
                                                   acquirers wait publishes one of them, at random, on
                                                   <base>slot-freed (supply/slot-waker.ts wakes it)
    offer ticket owner spec                     -> 1 | 0 (a warm sandbox is ready: into the pool)
    claim spec owner ttl [f v]...               -> {1,ticket,{lease fields}} | {0}   (oldest of the spec; spec '*' =
                                                   any, the most recently readied: to evict the one wanted last)
    withdraw ticket owner                       -> 1 | 0 (take an idle warm sandbox back out; 0 = claimed meanwhile)
    wait ticket ttl / unwait ticket             -> 1
    counts                                      -> {live, starting, waiters, ready, warming}
    pool                                        -> flat {ticket, "spec<TAB>state", ...}
    orphans graceMs unlabelledGraceMs [sandbox ticket label]...      -> {sandbox...} to kill now
    now                                         -> server ms
]]
local base = ARGV[1]
local op = ARGV[2]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local function leaseKey(ticket) return base .. 'lease:' .. ticket end
local function readyKey(spec) return base .. 'pool-ready:' .. spec end

local function split(text)
  local parts = {}
  for part in string.gmatch(text .. '\t', '([^\t]*)\t') do parts[#parts + 1] = part end
  return parts
end

-- A warm sandbox's remaining platform lifetime comes as a duration (`lifetime_left_ms`, measured on the writer's
-- own clock) and is kept as a point in server time (`lifetime_ends_at`); a claim hands back what is left then. So
-- a claimer on another machine learns when the lifetime ends without comparing two machines' clocks.
local function setFields(key, from)
  for i = from, #ARGV, 2 do
    if ARGV[i] == 'lifetime_left_ms' then
      redis.call('HSET', key, 'lifetime_ends_at', now + tonumber(ARGV[i + 1]))
    else
      redis.call('HSET', key, ARGV[i], ARGV[i + 1])
    end
  end
end

-- Drops a ticket from every index; with doom, queues its sandbox (if it got one) for the reaper.
local function forget(ticket, doom)
  redis.call('ZREM', KEYS[1], ticket)
  redis.call('ZREM', KEYS[2], ticket)
  redis.call('ZREM', KEYS[5], ticket)
  local tail = redis.call('HGET', KEYS[3], ticket)
  if tail then
    local parts = split(tail)
    if doom and parts[2] ~= nil and parts[2] ~= '' then redis.call('SADD', KEYS[4], parts[1] .. '\t' .. parts[2]) end
    if redis.call('HDEL', KEYS[6], ticket) == 1 and parts[3] ~= nil then redis.call('LREM', readyKey(parts[3]), 0, ticket) end
    redis.call('HDEL', KEYS[3], ticket)
  else
    redis.call('HDEL', KEYS[6], ticket)
  end
end

-- Index entries past their expiry whose lease key is gone: the owner stopped renewing (crashed, hung).
local function purge()
  local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 500)
  for _, ticket in ipairs(due) do
    if redis.call('EXISTS', leaseKey(ticket)) == 0 then forget(ticket, true) end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
end

local function ownedBy(ticket, owner)
  return redis.call('HGET', leaseKey(ticket), 'owner') == owner
end

-- Ready and warming sandboxes in the pool; and how many (of both) have `spec`.
local function poolCounts(spec)
  local ready, warming, ofSpec = 0, 0, 0
  local entries = redis.call('HVALS', KEYS[6])
  for _, entry in ipairs(entries) do
    local parts = split(entry)
    if parts[2] == 'ready' then ready = ready + 1 else warming = warming + 1 end
    if parts[1] == spec then ofSpec = ofSpec + 1 end
  end
  return ready, warming, ofSpec
end

local function extend(ticket, ttl)
  redis.call('PEXPIRE', leaseKey(ticket), ttl)
  redis.call('ZADD', KEYS[1], now + ttl, ticket)
  if redis.call('ZSCORE', KEYS[2], ticket) then redis.call('ZADD', KEYS[2], now + ttl, ticket) end
end

-- Claims a ready warm sandbox of `spec` ('*' = any, the most recently readied) for `owner`: {1,ticket,{fields}}, or
-- {0} when none is left. Lease fields to set come as name/value pairs from ARGV[fieldsFrom].
local function claimOne(spec, owner, ttl, fieldsFrom)
  local candidates = {}
  if spec == '*' then
    -- Any ready sandbox (to evict one for a cold create when the live cap is full), the most recently readied
    -- first: pools fill in the order jobs will come, so the newest is the one wanted last.
    local entries = redis.call('HGETALL', KEYS[6])
    for i = 1, #entries, 2 do
      local parts = split(entries[i + 1])
      if parts[2] == 'ready' then
        local readyAt = tonumber(redis.call('HGET', leaseKey(entries[i]), 'ready_at')) or 0
        candidates[#candidates + 1] = {entries[i], parts[1], readyAt}
      end
    end
    table.sort(candidates, function(a, b) return a[3] > b[3] end)
  end
  local index = 0
  while true do
    local ticket, ticketSpec
    if spec == '*' then
      index = index + 1
      if candidates[index] == nil then return {0} end
      ticket, ticketSpec = candidates[index][1], candidates[index][2]
      redis.call('LREM', readyKey(ticketSpec), 0, ticket)
    else
      ticket, ticketSpec = redis.call('LPOP', readyKey(spec)), spec
      if not ticket then return {0} end
    end
    if redis.call('EXISTS', leaseKey(ticket)) == 1 then
      redis.call('HDEL', KEYS[6], ticket)
      redis.call('HSET', leaseKey(ticket), 'owner', owner)
      setFields(leaseKey(ticket), fieldsFrom)
      extend(ticket, ttl)
      local fields = redis.call('HGETALL', leaseKey(ticket))
      for i = 1, #fields, 2 do
        if fields[i] == 'lifetime_ends_at' then
          fields[#fields + 1] = 'lifetime_left_ms'
          fields[#fields + 1] = tostring(tonumber(fields[i + 1]) - now)
          break
        end
      end
      return {1, ticket, fields}
    end
    forget(ticket, true)
  end
end

if op == 'reserve' then
  local ticket, owner, ttl = ARGV[3], ARGV[4], tonumber(ARGV[5])
  local maxLive, maxStarting, warm = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8] == '1'
  local target, spec, poolMax, specTarget = ARGV[9], ARGV[10], tonumber(ARGV[11]), tonumber(ARGV[12])
  local claim, waiter, waitTtl = ARGV[13] == '1', ARGV[14], tonumber(ARGV[15])
  purge()
  if claim then
    local claimed = claimOne(spec, owner, ttl, 16)
    if claimed[1] == 1 then
      if waiter ~= '' then redis.call('ZREM', KEYS[5], waiter) end
      return {2, claimed[2], claimed[3]}
    end
  end
  local live, starting = redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2])
  local ready, warming, ofSpec = poolCounts(spec)
  local function refuse(reason)
    if waiter ~= '' then redis.call('ZADD', KEYS[5], now + waitTtl, waiter) end
    return {0, reason, live, starting, ready}
  end
  if warm then
    -- The warm pool only uses capacity nobody is waiting for, and never grows past its bounds.
    if redis.call('ZCARD', KEYS[5]) > 0 then return refuse('yield') end
    if ready + warming >= poolMax then return refuse('pool') end
    if ofSpec >= specTarget then return refuse('spec') end
  end
  if live >= maxLive then return refuse('live') end
  if starting >= maxStarting then return refuse('starting') end
  local key = leaseKey(ticket)
  redis.call('HSET', key, 'owner', owner, 'ticket', ticket, 'target', target, 'spec', spec, 'sandbox', '')
  setFields(key, 16)
  redis.call('PEXPIRE', key, ttl)
  redis.call('ZADD', KEYS[1], now + ttl, ticket)
  redis.call('ZADD', KEYS[2], now + ttl, ticket)
  redis.call('ZREM', KEYS[5], ticket)
  if waiter ~= '' then redis.call('ZREM', KEYS[5], waiter) end
  redis.call('HSET', KEYS[3], ticket, target .. '\t\t' .. spec)
  if warm then redis.call('HSET', KEYS[6], ticket, spec .. '\twarming') end
  return {1, 'ok', live + 1, starting + 1, ready}
end

if op == 'renew' then
  local ticket, owner, ttl = ARGV[3], ARGV[4], tonumber(ARGV[5])
  if not ownedBy(ticket, owner) then return 0 end
  extend(ticket, ttl)
  return 1
end

if op == 'update' then
  local ticket, owner = ARGV[3], ARGV[4]
  if not ownedBy(ticket, owner) then return 0 end
  local target, sandbox, spec = ARGV[6], ARGV[7], ARGV[8]
  local key = leaseKey(ticket)
  redis.call('HSET', key, 'target', target, 'sandbox', sandbox, 'spec', spec)
  setFields(key, 9)
  redis.call('HSET', KEYS[3], ticket, target .. '\t' .. sandbox .. '\t' .. spec)
  if ARGV[5] == '1' then redis.call('ZREM', KEYS[2], ticket) end
  return 1
end

if op == 'release' then
  local ticket, owner = ARGV[3], ARGV[4]
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
end

if op == 'offer' then
  local ticket, owner, spec = ARGV[3], ARGV[4], ARGV[5]
  if not ownedBy(ticket, owner) then return 0 end
  redis.call('HSET', KEYS[6], ticket, spec .. '\tready')
  redis.call('HSET', leaseKey(ticket), 'ready_at', now)
  redis.call('RPUSH', readyKey(spec), ticket)
  redis.call('ZREM', KEYS[2], ticket)
  return 1
end

if op == 'claim' then
  purge()
  return claimOne(ARGV[3], ARGV[4], tonumber(ARGV[5]), 6)
end

if op == 'withdraw' then
  local ticket, owner = ARGV[3], ARGV[4]
  if not ownedBy(ticket, owner) then return 0 end
  local entry = redis.call('HGET', KEYS[6], ticket)
  if not entry then return 0 end
  local parts = split(entry)
  redis.call('HDEL', KEYS[6], ticket)
  redis.call('LREM', readyKey(parts[1]), 0, ticket)
  return 1
end

if op == 'wait' then
  redis.call('ZADD', KEYS[5], now + tonumber(ARGV[4]), ARGV[3])
  return 1
end

if op == 'unwait' then
  redis.call('ZREM', KEYS[5], ARGV[3])
  return 1
end

if op == 'counts' then
  purge()
  local ready, warming = poolCounts()
  return {redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), redis.call('ZCARD', KEYS[5]), ready, warming}
end

if op == 'pool' then
  purge()
  return redis.call('HGETALL', KEYS[6])
end

if op == 'orphans' then
  -- A listed sandbox is owned when its ticket's lease names it, or names the create call (label) that made it
  -- while that call is in flight. Unowned ones are killed once seen unowned for the grace (server time).
  local grace, unlabelledGrace = tonumber(ARGV[3]), tonumber(ARGV[4])
  purge()
  local listed = {}
  for i = 5, #ARGV, 3 do listed[ARGV[i]] = true end
  -- Sandboxes no longer listed (killed meanwhile) need no grace record.
  local seenBefore = redis.call('HKEYS', KEYS[7])
  for _, sandbox in ipairs(seenBefore) do
    if not listed[sandbox] then redis.call('HDEL', KEYS[7], sandbox) end
  end
  local kill = {}
  for i = 5, #ARGV, 3 do
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
end

if op == 'now' then
  return now
end

return redis.error_reply('slots.lua: unknown op ' .. tostring(op))
