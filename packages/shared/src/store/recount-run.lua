--[[
  Recount a run's counters from its result index, atomically with every commit and retract (both are Lua
  scripts too). The counters are kept incrementally by commit-result.lua and retract-result.lua; this repairs
  a hash edited by hand or by an older version.
  KEYS[1] run hash   KEYS[2] result index
  Returns {done, completed, failed, resolved}.
]]
local done, completed, failed, resolved = 0, 0, 0, 0
for _, entry in ipairs(redis.call('HVALS', KEYS[2])) do
  local status, res = string.match(entry, '^%S+ (%S+) (%S+)')
  done = done + 1
  if status == 'completed' then completed = completed + 1 elseif status == 'failed' then failed = failed + 1 end
  if res == '1' then resolved = resolved + 1 end
end
redis.call('HSET', KEYS[1], 'done', done, 'completed', completed, 'failed', failed, 'resolved', resolved)
return {done, completed, failed, resolved}
