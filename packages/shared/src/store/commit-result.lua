--[[
  Commit one episode result exactly once.
  KEYS[1] result key   KEYS[2] run results stream   KEYS[3] run hash
  KEYS[4] run group sizes hash   KEYS[5] this result's group hash   KEYS[6] run groups stream
  ARGV[1] result JSON  ARGV[2] retention seconds    ARGV[3] stream max length (approximate)
  ARGV[4] status (completed|failed)  ARGV[5] resolved ('1' | '0' | '')  ARGV[6] episode label (run|episode|sample)
  ARGV[7] episode id (the group id)   ARGV[8] sample index
  Returns {1, streamId, groupStreamId or ''} when stored, {0, '', ''} when a result already existed (a duplicate
  execution). A group is complete when as many of its samples have a result as its size says; its event is
  appended once, guarded by the group hash's `emitted` field, however often its samples are committed again.
]]
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then
  local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'key', KEYS[1], 'job', ARGV[6], 'status', ARGV[4])
  redis.call('HINCRBY', KEYS[3], 'done', 1)
  redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
  if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[3], 'resolved', 1) end
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  redis.call('EXPIRE', KEYS[3], ARGV[2])
  local group = ''
  redis.call('HSET', KEYS[5], 's' .. ARGV[8], '1')
  redis.call('EXPIRE', KEYS[5], ARGV[2])
  redis.call('EXPIRE', KEYS[4], ARGV[2])
  local size = tonumber(redis.call('HGET', KEYS[4], ARGV[7]) or '0')
  if size > 0 and redis.call('HEXISTS', KEYS[5], 'emitted') == 0 and redis.call('HLEN', KEYS[5]) >= size then
    group = redis.call('XADD', KEYS[6], 'MAXLEN', '~', ARGV[3], '*', 'episode', ARGV[7], 'size', tostring(size))
    redis.call('HSET', KEYS[5], 'emitted', group)
    redis.call('HINCRBY', KEYS[3], 'groups_completed', 1)
    redis.call('EXPIRE', KEYS[6], ARGV[2])
  end
  return {1, id, group}
end
redis.call('HINCRBY', KEYS[3], 'duplicates', 1)
return {0, '', ''}
