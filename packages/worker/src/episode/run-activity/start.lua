--[[
  Per-run activity counters, so `status` and the run pages read sizes instead of listing the queue's jobs: a job
  runs on a worker (a re-run after a stall takes it over).
  KEYS[1] active-jobs HASH job -> "worker<TAB>run" (every running episode of the fleet)
  ARGV[1] key base (same hash tag) for <base>run-active:<run>, <base>run-retrying:<run>, <base>worker-alive:<w>
  ARGV[2] job   ARGV[3] run   ARGV[4] worker
  Returns 1
]]
--- @include "run-keys"

local job, run, worker = ARGV[2], ARGV[3], ARGV[4]
redis.call('HSET', active(run), job, worker)
redis.call('HSET', KEYS[1], job, worker .. '\t' .. run)
redis.call('SREM', retrying(run), job)
return 1
