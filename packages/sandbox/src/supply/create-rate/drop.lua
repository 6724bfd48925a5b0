--[[
  The platform said 429: the rate is multiplied by the factor (AIMD decrease).
  Fleet-wide CreateSandbox pacing: GCRA (generic cell rate algorithm) with an adaptive rate (AIMD), one atomic
  script per operation on Redis's own clock (TIME), so every worker of the fleet shares one schedule.
  KEYS[1] state HASH: rate (creates/s now), tat (theoretical arrival time, server ms), changed (ms of the last
          rate change), dropped (ms of the last decrease)
  ARGV[1] ceiling: the configured rate, creates/s (also the starting rate)
  ARGV[2] burst: creates that may go at once after a quiet spell (>= 1)
  ARGV[3] floor: lowest rate a decrease may reach, creates/s
  ARGV[4] recovery: creates/s regained per second without a decrease (additive increase)
  ARGV[5] decrease factor (0 < f < 1)
  ARGV[6] cooldown ms (decreases closer together than this count once: one burst of 429s is one signal)
  Returns {rate}
]]
--- @include "rate-state"

local factor, cooldown = tonumber(ARGV[5]), tonumber(ARGV[6])
if now - dropped >= cooldown then
  rate = math.max(floor, rate * factor)
  dropped = now
end
redis.call('HSET', KEYS[1], 'rate', rate, 'changed', changed, 'dropped', dropped)
return {tostring(rate)}
