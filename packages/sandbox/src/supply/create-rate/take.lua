--[[
  Book the next create slot.
  Fleet-wide CreateSandbox pacing: GCRA (generic cell rate algorithm) with an adaptive rate (AIMD), one atomic
  script per operation on Redis's own clock (TIME), so every worker of the fleet shares one schedule.
  KEYS[1] state HASH: rate (creates/s now), tat (theoretical arrival time, server ms), changed (ms of the last
          rate change), dropped (ms of the last decrease)
  ARGV[1] ceiling: the configured rate, creates/s (also the starting rate)
  ARGV[2] burst: creates that may go at once after a quiet spell (>= 1)
  ARGV[3] floor: lowest rate a decrease may reach, creates/s
  ARGV[4] recovery: creates/s regained per second without a decrease (additive increase)
  ARGV[5] horizon ms: how far ahead a caller may book its slot
  Returns {1, waitMs, rate, at}: a slot is booked at server time `at` (ms); call CreateSandbox after waitMs
          {0, retryMs, rate, at}: the next free slot (at) is beyond the horizon; nothing was booked, come back
          in retryMs
  Booking (rather than "try now, else sleep and poll") keeps the order of callers and needs no polling herd:
  each caller learns exactly when its create may go. The horizon bounds how stale a booking can get when the
  rate drops after it was made.
]]
--- @include "rate-state"

local horizon = tonumber(ARGV[5])
local from = math.max(tat, now)
local at = from - tolerance
local wait = math.max(0, at - now)
if wait > horizon then
  redis.call('HSET', KEYS[1], 'rate', rate, 'changed', changed)
  return {0, math.ceil(wait - horizon), tostring(rate), tostring(math.max(now, at))}
end
redis.call('HSET', KEYS[1], 'rate', rate, 'tat', from + interval, 'changed', changed)
return {1, math.ceil(wait), tostring(rate), tostring(math.max(now, at))}
