--[[
  Appends several rows to a BullMQ job's log in one call: BullMQ's own addLog (one row per call), batched.
  KEYS[1] the job's hash   KEYS[2] the job's log list
  ARGV[1] keepLogs ('' = keep all)   ARGV[2..] the rows
  Returns the log length, or -1 when the job no longer exists (then nothing is written).
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local n = redis.call('RPUSH', KEYS[2], unpack(ARGV, 2))
if ARGV[1] ~= '' then
  local keep = tonumber(ARGV[1])
  redis.call('LTRIM', KEYS[2], -keep, -1)
  return math.min(keep, n)
end
return n
