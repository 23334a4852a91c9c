--[[
  release.lua: give back entries a stopping run claimed but never handed to a handler, so
  that any run can reclaim them at once (SPEC §5.1 (b)).

  Without it such entries sit in this consumer's PEL until minIdle passes (5 min by
  default) and carry one more delivery for an attempt that never reached a handler. Here
  each one is re-claimed by the same consumer with its idle time set to minIdle (so the
  next XAUTOCLAIM of any run takes it) and its delivery count put back to what it was
  before this run's claim (RETRYCOUNT; JUSTID alone would still leave the claim's count).

  Safety: an entry is touched only while it is still pending under this consumer (a point
  XPENDING filtered by consumer). Nothing is acked, and XCLAIM runs without FORCE, so an id
  that left the PEL meanwhile is never put back into it. The caller releases only entries
  no handler ever saw, after its last handler stopped, so nothing is handled twice at once.
  A crash before this script runs leaves the entries pending exactly as without it.

  KEYS[1]  source stream
  ARGV[1]  group
  ARGV[2]  consumer (the one that claimed the entries)
  ARGV[3]  min idle, ms (the idle time given to each released entry)
  then, per entry, 2 values: entry id, delivery count before this run's claim

  Reply: number of entries released
]]
local stream = KEYS[1]
local group, consumer, min_idle = ARGV[1], ARGV[2], ARGV[3]

local released = 0
for i = 4, #ARGV, 2 do
  local id, deliveries = ARGV[i], ARGV[i + 1]
  local row = redis.call('XPENDING', stream, group, id, id, 1, consumer)
  if row[1] then
    redis.call('XCLAIM', stream, group, consumer, 0, id, 'IDLE', min_idle, 'RETRYCOUNT', deliveries, 'JUSTID')
    released = released + 1
  end
end

return released
