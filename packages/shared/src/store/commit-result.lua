--[[
  Commit one episode result exactly once per generation.
  KEYS[1] result key   KEYS[2] run results stream   KEYS[3] run hash   KEYS[4] result index (hash)
  KEYS[5] generations (hash)   KEYS[6] run group sizes hash   KEYS[7] this result's group hash
  KEYS[8] run groups stream   KEYS[9] pending re-runs (hash: label -> job; see retract-result.lua)
  KEYS[10] executions begun (hash: label -> the job instance whose execution began last; ResultStore.begin)
  ARGV[1] result JSON  ARGV[2] retention seconds    ARGV[3] stream max length (approximate)
  ARGV[4] status (completed|failed)  ARGV[5] resolved ('1' | '0' | '')  ARGV[6] episode label (run|episode|sample)
  ARGV[7] episode id (the group id)   ARGV[8] sample index
  ARGV[9] the fence, cjson: which execution commits (ResultStore's CommitFence)
          generation     the generation the execution started in
          attemptsMade   the job's attemptsMade during that execution
          afterTheFact   true when the committer did not see the execution begin (a failed job settled after the
                         fact): it cannot tell which generation that execution ran in, so it is refused ('stale')
                         while a re-run is pending — an execution that began after the force would have cleared
                         the entry (ResultStore.begin)
          execution      with afterTheFact: the settled job instance (its creation timestamp); refused ('stale')
                         when another job instance has begun an execution since (a force re-added the job and its
                         re-run began: the pending entry is gone, but this failure is not the re-run's)
  The index holds, per label with a current result, "<stream id> <status> <resolved 1|0|-> <attemptsMade>";
  the run counters are kept here and in retract-result.lua only, so they always equal the index. A stored
  result clears the episode's pending re-run: the generation it was forced into has its result.
  Returns {1, streamId, groupStreamId or ''} when stored; {0, '', 'duplicate'} when this generation already has
  its result (a second execution of the same job); {0, '', 'stale'} when the episode was forced or retried since
  the execution started (its generation moved on). A group is complete when as many of its samples have a
  result as its size says; its event is appended once, guarded by the group hash's `emitted` field, however
  often its samples are committed again (a replaced sample does not emit it twice).
]]
local fence = cjson.decode(ARGV[9])
local gen = tonumber(redis.call('HGET', KEYS[5], ARGV[6]) or '0')
if tonumber(fence.generation) ~= gen then
  redis.call('HINCRBY', KEYS[3], 'stale', 1)
  return {0, '', 'stale'}
end
if fence.afterTheFact == true and redis.call('HEXISTS', KEYS[9], ARGV[6]) == 1 then
  redis.call('HINCRBY', KEYS[3], 'stale', 1)
  return {0, '', 'stale'}
end
if fence.afterTheFact == true and type(fence.execution) == 'string' and fence.execution ~= '' then
  local began = redis.call('HGET', KEYS[10], ARGV[6])
  if began and began ~= fence.execution then
    redis.call('HINCRBY', KEYS[3], 'stale', 1)
    return {0, '', 'stale'}
  end
end
if redis.call('HEXISTS', KEYS[4], ARGV[6]) == 1 or redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[3], 'duplicates', 1)
  return {0, '', 'duplicate'}
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'key', KEYS[1], 'job', ARGV[6], 'status', ARGV[4])
local resolved = ARGV[5]
if resolved == '' then resolved = '-' end
redis.call('HSET', KEYS[4], ARGV[6], id .. ' ' .. ARGV[4] .. ' ' .. resolved .. ' ' .. tostring(fence.attemptsMade))
redis.call('HINCRBY', KEYS[3], 'done', 1)
redis.call('HDEL', KEYS[9], ARGV[6])
redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[3], 'resolved', 1) end
for i = 2, 5 do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
local group = ''
redis.call('HSET', KEYS[7], 's' .. ARGV[8], '1')
redis.call('EXPIRE', KEYS[7], ARGV[2])
redis.call('EXPIRE', KEYS[6], ARGV[2])
local size = tonumber(redis.call('HGET', KEYS[6], ARGV[7]) or '0')
if size > 0 and redis.call('HEXISTS', KEYS[7], 'emitted') == 0 and redis.call('HLEN', KEYS[7]) >= size then
  group = redis.call('XADD', KEYS[8], 'MAXLEN', '~', ARGV[3], '*', 'episode', ARGV[7], 'size', tostring(size))
  redis.call('HSET', KEYS[7], 'emitted', group)
  redis.call('HINCRBY', KEYS[3], 'groups_completed', 1)
  redis.call('EXPIRE', KEYS[8], ARGV[2])
end
return {1, id, group}
