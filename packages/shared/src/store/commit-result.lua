--[[
  Commit one episode result exactly once.
  KEYS[1] result key   KEYS[2] run results stream   KEYS[3] run hash
  ARGV[1] result JSON  ARGV[2] retention seconds    ARGV[3] stream max length (approximate)
  ARGV[4] status (completed|failed)  ARGV[5] resolved ('1' | '0' | '')  ARGV[6] episode label (run|episode|sample)
  Returns {1, streamId} when stored, {0, ''} when a result already existed (a duplicate execution).
]]
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then
  local id = redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'key', KEYS[1], 'job', ARGV[6], 'status', ARGV[4])
  redis.call('HINCRBY', KEYS[3], 'done', 1)
  redis.call('HINCRBY', KEYS[3], ARGV[4], 1)
  if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[3], 'resolved', 1) end
  redis.call('EXPIRE', KEYS[2], ARGV[2])
  redis.call('EXPIRE', KEYS[3], ARGV[2])
  return {1, id}
end
redis.call('HINCRBY', KEYS[3], 'duplicates', 1)
return {0, ''}
