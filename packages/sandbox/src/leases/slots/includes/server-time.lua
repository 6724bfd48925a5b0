-- Redis server time in ms: the one clock every slot decision is taken on.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
