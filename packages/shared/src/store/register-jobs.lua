--[[
  Register a run's job ids and count each new one into its RL group's size, atomically, so concurrent or
  repeated submissions of the same run never count a sample twice.
  KEYS[1] run jobs set   KEYS[2] run group sizes hash
  ARGV    job id 1, episode id 1, job id 2, episode id 2, ...
  Returns the number of job ids that were new.
]]
local added = 0
for i = 1, #ARGV, 2 do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('HINCRBY', KEYS[2], ARGV[i + 1], 1)
    added = added + 1
  end
end
return added
