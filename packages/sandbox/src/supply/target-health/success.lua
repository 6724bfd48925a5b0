--[[
  A sandbox target answered: its failures in the window are forgotten (a drain in progress runs out on its own).
  KEYS[1] failures counter (see failure.lua)
  Returns 1
]]
redis.call('DEL', KEYS[1])
return 1
