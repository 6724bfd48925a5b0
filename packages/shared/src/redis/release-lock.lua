--[[
  Release a lock taken with SET key token NX PX ms, only while it is still ours (compare-and-delete): a lock that
  expired meanwhile and was taken by someone else is left to them.
  KEYS[1] the lock key   ARGV[1] our token
  Returns 1 when released, 0 when the lock is not (or no longer) ours
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
