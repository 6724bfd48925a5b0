--[[
  The current rate and how far the schedule runs ahead of now (nothing is written).
  Fleet-wide CreateSandbox pacing: GCRA (generic cell rate algorithm) with an adaptive rate (AIMD), one atomic
  script per operation on Redis's own clock (TIME), so every worker of the fleet shares one schedule.
  KEYS[1] state HASH: rate (creates/s now), tat (theoretical arrival time, server ms), changed (ms of the last
          rate change), dropped (ms of the last decrease)
  ARGV[1] ceiling: the configured rate, creates/s (also the starting rate)
  ARGV[2] burst: creates that may go at once after a quiet spell (>= 1)
  ARGV[3] floor: lowest rate a decrease may reach, creates/s
  ARGV[4] recovery: creates/s regained per second without a decrease (additive increase)
  Returns {rate, tat - now}
]]
--- @include "rate-state"

return {tostring(rate), tostring(math.max(0, tat - now))}
