--[[
  Per-run activity counters, so `status` and the run pages read sizes instead of listing the queue's jobs.
  KEYS[1] active-jobs HASH job -> "worker<TAB>run" (every running episode of the fleet)
  ARGV[1] key base (same hash tag) for <base>run-active:<run>, <base>run-retrying:<run>, <base>worker-alive:<w>
  ARGV[2] op:
    start  job run worker          the job runs on `worker` (a re-run after a stall takes it over)
    finish job run worker retry    it stopped; retry=1: it waits for a retry. Only the worker running it ends it.
    sweep                          drops entries of workers whose alive key Redis has expired -> count dropped
]]
local base, op = ARGV[1], ARGV[2]
local function active(run) return base .. 'run-active:' .. run end
local function retrying(run) return base .. 'run-retrying:' .. run end

if op == 'start' then
  local job, run, worker = ARGV[3], ARGV[4], ARGV[5]
  redis.call('HSET', active(run), job, worker)
  redis.call('HSET', KEYS[1], job, worker .. '\t' .. run)
  redis.call('SREM', retrying(run), job)
  return 1
end

if op == 'finish' then
  local job, run, worker, retry = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
  if redis.call('HGET', active(run), job) ~= worker then return 0 end
  redis.call('HDEL', active(run), job)
  redis.call('HDEL', KEYS[1], job)
  if retry == '1' then redis.call('SADD', retrying(run), job) end
  return 1
end

if op == 'sweep' then
  local entries = redis.call('HGETALL', KEYS[1])
  local alive = {}
  local dropped = 0
  for i = 1, #entries, 2 do
    local job, entry = entries[i], entries[i + 1]
    local tab = string.find(entry, '\t', 1, true)
    local worker, run = string.sub(entry, 1, tab - 1), string.sub(entry, tab + 1)
    if alive[worker] == nil then alive[worker] = redis.call('EXISTS', base .. 'worker-alive:' .. worker) == 1 end
    if not alive[worker] then
      if redis.call('HGET', active(run), job) == worker then redis.call('HDEL', active(run), job) end
      redis.call('HDEL', KEYS[1], job)
      dropped = dropped + 1
    end
  end
  return dropped
end

return redis.error_reply('run-activity.lua: unknown op ' .. tostring(op))
