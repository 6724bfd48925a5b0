--[[
  The target's pacing state as of now, for take.lua, drop.lua and peek.lua: the stored rate after its additive
  increase since the last change (clamped to [floor, ceiling]: the configured ceiling may have been lowered), the
  theoretical arrival time, and the GCRA interval and burst tolerance at that rate.
  KEYS[1] state HASH: rate (creates/s now), tat (theoretical arrival time, server ms), changed (ms of the last
          rate change), dropped (ms of the last decrease)
  ARGV[1] ceiling   ARGV[2] burst   ARGV[3] floor   ARGV[4] recovery (see each script's header)
]]
local ceiling, burst, floor, recovery = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
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
