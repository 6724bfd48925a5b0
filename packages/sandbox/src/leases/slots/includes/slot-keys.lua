--[[
  Fleet-wide sandbox slots: the live and starting caps, every sandbox's lease and the warm pool, each operation one
  atomic script (../<op>.lua) on Redis's own clock (TIME), so no two machines' clocks are ever compared.

  A slot is a "ticket" (a random id taken before CreateSandbox is called). Its lease is the key
  <base>lease:<ticket>, a hash with a TTL: the slot is alive exactly as long as that key exists. The indexes
  below are kept in step by these scripts; an index entry whose lease key has expired is dropped by purge()
  (that is how a dead worker's slots free themselves), and the sandbox it named is queued for the reaper.

  Every slot script takes the same keys and key base:
  KEYS[1] leases   ZSET ticket -> lease expiry (server ms)          live slots (counts toward the live cap)
  KEYS[2] starting ZSET ticket -> lease expiry                       slots still creating or starting
  KEYS[3] tails    HASH ticket -> "target<TAB>sandbox<TAB>spec"      what outlives the lease key (for the reaper)
  KEYS[4] doomed   SET  "target<TAB>sandbox"                         sandboxes whose lease expired: to be killed
  KEYS[5] waiters  ZSET ticket -> expiry                             acquirers waiting for a slot (warm fills yield)
  KEYS[6] pool     HASH ticket -> "spec<TAB>warming|ready"           the warm pool
  KEYS[7] orphans  HASH sandbox -> first time seen without an owner  (reaper grace, server ms)
  ARGV[1] key base for per-ticket keys (same hash tag): <base>lease:<ticket>, <base>pool-ready:<spec>
]]
local base = ARGV[1]

local function leaseKey(ticket) return base .. 'lease:' .. ticket end
local function readyKey(spec) return base .. 'pool-ready:' .. spec end
