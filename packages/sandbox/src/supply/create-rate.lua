--[[
  Fleet-wide CreateSandbox pacing: GCRA (generic cell rate algorithm) with an adaptive rate (AIMD), in one
  atomic script on Redis's own clock (TIME), so every worker of the fleet shares one schedule.

  KEYS[1] state HASH: rate (creates/s now), tat (theoretical arrival time, server ms), changed (ms of the last
          rate change), dropped (ms of the last decrease)
  ARGV[1] op: take | drop | peek
  ARGV[2] ceiling: the configured rate, creates/s (also the starting rate)
  ARGV[3] burst: creates that may go at once after a quiet spell (>= 1)
  ARGV[4] floor: lowest rate a decrease may reach, creates/s
  ARGV[5] recovery: creates/s regained per second without a decrease (additive increase)
  ARGV[6] take: horizon ms, how far ahead a caller may book its slot | drop: decrease factor (0 < f < 1)
  ARGV[7] drop: cooldown ms (decreases closer together than this count once: one burst of 429s is one signal)

  take -> {1, waitMs, rate, at}: a slot is booked at server time `at` (ms); call CreateSandbox after waitMs
          {0, retryMs, rate, at}: the next free slot (at) is beyond the horizon; nothing was booked, come back
          in retryMs
  drop -> {rate}: the platform said 429; the rate is multiplied by the factor (AIMD decrease)
  peek -> {rate, tat - now}

  Booking (rather than "try now, else sleep and poll") keeps the order of callers and needs no polling herd:
  each caller learns exactly when its create may go. The horizon bounds how stale a booking can get when the
  rate drops after it was made.
]]
local op = ARGV[1]
local ceiling, burst, floor, recovery = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000

local state = redis.call('HMGET', KEYS[1], 'rate', 'tat', 'changed', 'dropped')
local rate = tonumber(state[1]) or ceiling
local tat = tonumber(state[2]) or now
local changed = tonumber(state[3]) or now
local dropped = tonumber(state[4]) or 0

-- Additive increase since the last change, then clamp (the configured ceiling may have been lowered).
if rate < ceiling then rate = rate + recovery * math.max(0, now - changed) / 1000 end
rate = math.max(floor, math.min(ceiling, rate))
changed = now

local interval = 1000 / rate
local tolerance = (burst - 1) * interval

if op == 'take' then
  local horizon = tonumber(ARGV[6])
  local from = math.max(tat, now)
  local at = from - tolerance
  local wait = math.max(0, at - now)
  if wait > horizon then
    redis.call('HSET', KEYS[1], 'rate', rate, 'changed', changed)
    return {0, math.ceil(wait - horizon), tostring(rate), tostring(math.max(now, at))}
  end
  redis.call('HSET', KEYS[1], 'rate', rate, 'tat', from + interval, 'changed', changed)
  return {1, math.ceil(wait), tostring(rate), tostring(math.max(now, at))}
end

if op == 'drop' then
  local factor, cooldown = tonumber(ARGV[6]), tonumber(ARGV[7])
  if now - dropped >= cooldown then
    rate = math.max(floor, rate * factor)
    dropped = now
  end
  redis.call('HSET', KEYS[1], 'rate', rate, 'changed', changed, 'dropped', dropped)
  return {tostring(rate)}
end

if op == 'peek' then
  return {tostring(rate), tostring(math.max(0, tat - now))}
end

return redis.error_reply('create-rate.lua: unknown op ' .. tostring(op))
