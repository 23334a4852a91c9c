--[[
  dlt-trim.lua: drop dead-letter records older than the retention window (SPEC §7).

  A DLT record's id is assigned by XADD '*' when it is written, so its millisecond part is
  the dead-lettering time on the Redis clock. The cut-off is computed from Redis TIME, not
  the caller's clock, so a skewed function clock can never delete younger evidence.
  XTRIM MINID keeps every record whose id is >= MINID, i.e. written within the window.

  KEYS[1]  dead-letter stream
  ARGV[1]  retention window, seconds (positive integer)

  Reply: { removed, cutoff_ms }
    removed    records deleted
    cutoff_ms  records dead-lettered before this instant (ms epoch, Redis clock) were eligible
]]
local dlt = KEYS[1]
local window_ms = tonumber(ARGV[1]) * 1000

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local cutoff = now_ms - window_ms
if cutoff <= 0 then return { 0, '0' } end

local cutoff_text = string.format('%d', cutoff)
local removed = redis.call('XTRIM', dlt, 'MINID', cutoff_text .. '-0')
return { removed, cutoff_text }
