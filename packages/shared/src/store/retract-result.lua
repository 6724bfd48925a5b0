--[[
  Retract an episode's current result so the episode can run again (submit --force, retry --failed, a job
  re-run from the dashboard), and open its next generation: executions that started before this call can no
  longer commit (commit-result.lua answers 'stale').
  KEYS[1] result key   KEYS[2] run results stream   KEYS[3] run hash   KEYS[4] result index   KEYS[5] generations
  KEYS[6] this result's RL group hash   KEYS[7] pending re-runs (hash: label -> the job to enqueue)
  ARGV[1] episode label   ARGV[2] expected stream id of the current result ('' = whatever is current)
  ARGV[3] retention seconds   ARGV[4] the sample's field in the group hash ('s<sample index>')
  ARGV[5] the re-run's job (JSON), '' for none: recorded as pending in the same step as the retract, so no
          crash or interleaving can leave the episode with neither a result nor a record that it must run again
          (a pending re-run is cleared when an execution begins or a result is committed; see requeue-rerun.ts)
  The result's stream entry is deleted, so a reader from the start sees one line per episode; the counters
  drop what the result had counted; the sample no longer counts towards its group, so a group that has not
  completed waits for the sample's new result (a group whose event was emitted stays emitted: commit-result.lua
  never emits it twice).
  Returns {1, generation, old result JSON} when a result was retracted, {0, generation, ''} when there was
  none, {-1, '', ''} when the current result is not the expected one (nothing changed).
]]
local entry = redis.call('HGET', KEYS[4], ARGV[1])
local old = ''
if entry then
  local id, status, resolved = string.match(entry, '^(%S+) (%S+) (%S+)')
  if ARGV[2] ~= '' and ARGV[2] ~= id then return {-1, '', ''} end
  old = redis.call('GET', KEYS[1]) or ''
  redis.call('DEL', KEYS[1])
  redis.call('XDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[4], ARGV[1])
  redis.call('HDEL', KEYS[6], ARGV[4])
  redis.call('HINCRBY', KEYS[3], 'done', -1)
  redis.call('HINCRBY', KEYS[3], status, -1)
  if resolved == '1' then redis.call('HINCRBY', KEYS[3], 'resolved', -1) end
elseif ARGV[2] ~= '' then
  return {-1, '', ''}
end
local gen = redis.call('HINCRBY', KEYS[5], ARGV[1], 1)
redis.call('EXPIRE', KEYS[5], ARGV[3])
if ARGV[5] ~= '' then redis.call('HSET', KEYS[7], ARGV[1], ARGV[5]) end
if entry then return {1, tostring(gen), old} end
return {0, tostring(gen), ''}
