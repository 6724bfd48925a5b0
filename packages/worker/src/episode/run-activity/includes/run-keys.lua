--[[
  The per-run keys under the key base (same hash tag as KEYS[1]), for start.lua, finish.lua and sweep.lua.
  ARGV[1] key base for <base>run-active:<run> (HASH job -> worker), <base>run-retrying:<run> (SET of jobs waiting
          for a retry), <base>worker-alive:<worker> (a key that expires unless its worker renews it)
]]
local base = ARGV[1]
local function active(run) return base .. 'run-active:' .. run end
local function retrying(run) return base .. 'run-retrying:' .. run end
