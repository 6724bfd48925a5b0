--[[
  A job stopped running (see start.lua); retry=1: it waits for a retry. Only the worker running it ends it.
  KEYS[1] active-jobs HASH job -> "worker<TAB>run" (every running episode of the fleet)
  ARGV[1] key base (same hash tag) for <base>run-active:<run>, <base>run-retrying:<run>, <base>worker-alive:<w>
  ARGV[2] job   ARGV[3] run   ARGV[4] worker   ARGV[5] retry ('1' | '0')
  Returns 1 | 0 (another worker runs it now)
]]
--- @include "run-keys"

local job, run, worker, retry = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if redis.call('HGET', active(run), job) ~= worker then return 0 end
redis.call('HDEL', active(run), job)
redis.call('HDEL', KEYS[1], job)
if retry == '1' then redis.call('SADD', retrying(run), job) end
return 1
