--[[
  release.lua: put back entries a stopping run claimed but never handed to a handler
  (SPEC §5.1 (b) and "Held ordering keys").

  Without it such entries sit in this consumer's PEL until minIdle passes (5 min by
  default) and carry one more delivery for an attempt that never reached a handler. Here
  each one is re-claimed by the same consumer with the idle time the caller gives and its
  delivery count put back to what it was before this run's claim (RETRYCOUNT; JUSTID alone
  would still leave the claim's count). The caller gives an entry any run may take at once
  minIdle, or, for one this run reclaimed, the idle it had then when that is longer: with a
  retry backoff (SPEC §5.6) its count is due only after a wait longer than minIdle, which had
  passed when it was claimed, and restoring the count must not make it wait again. A held
  entry (behind a retained entry of its ordering key) gets the time since its claim: it stays
  pending as it was, reclaimable only when the entry that holds its key is, as far as their
  own counts' waits allow (another run must not overtake it; per-key order across runs is
  SPEC §5.7's).

  Safety: an entry is touched only while it is still pending under this consumer (a point
  XPENDING filtered by consumer). Nothing is acked, and XCLAIM runs without FORCE, so an id
  that left the PEL meanwhile is never put back into it. The caller releases only entries
  no handler ever saw, after its last handler stopped, so nothing is handled twice at once.
  A crash before this script runs leaves the entries pending exactly as without it.

  KEYS[1]  source stream
  ARGV[1]  group
  ARGV[2]  consumer (the one that claimed the entries)
  then, per entry, 3 values: entry id, delivery count before this run's claim, idle time (ms)

  Reply: number of entries put back
]]
local stream = KEYS[1]
local group, consumer = ARGV[1], ARGV[2]

local released = 0
for i = 3, #ARGV, 3 do
  local id, deliveries, idle = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local row = redis.call('XPENDING', stream, group, id, id, 1, consumer)
  if row[1] then
    redis.call('XCLAIM', stream, group, consumer, 0, id, 'IDLE', idle, 'RETRYCOUNT', deliveries, 'JUSTID')
    released = released + 1
  end
end

return released
