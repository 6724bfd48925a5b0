--- @include "split-tabs"

-- Ready and warming sandboxes in the pool; and how many (of both) have `spec`.
local function poolCounts(spec)
  local ready, warming, ofSpec = 0, 0, 0
  local entries = redis.call('HVALS', KEYS[6])
  for _, entry in ipairs(entries) do
    local parts = split(entry)
    if parts[2] == 'ready' then ready = ready + 1 else warming = warming + 1 end
    if parts[1] == spec then ofSpec = ofSpec + 1 end
  end
  return ready, warming, ofSpec
end
