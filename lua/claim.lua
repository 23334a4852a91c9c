--[[
  claim.lua: reclaim idle pending entries for one consumer, resuming the PEL scan
  where the previous (possibly stateless, possibly other-process) run stopped.

  Why the cursor lives in Redis: a poll function keeps no memory between runs. If each
  run restarted XAUTOCLAIM at 0-0, a first page of entries that are always retained would
  be reclaimed forever and every entry behind it would starve. Storing the returned
  next-start id makes successive runs page through the whole PEL; 0-0 means a full pass
  finished and the next run starts over.

  Fresh entries (XREADGROUP >) are deliberately NOT read here: the caller pipelines that
  read beside this script in the same round trip, so large payloads never get copied
  through the Lua VM (that copy measured ~3x the Redis CPU of a plain read).

  KEYS[1]  source stream
  KEYS[2]  cursor key (string; absent = 0-0)
  ARGV[1]  group
  ARGV[2]  consumer
  ARGV[3]  min idle, ms
  ARGV[4]  max entries to reclaim (XAUTOCLAIM COUNT)

  Reply: { next_cursor, reclaimed_entries, deleted_ids, delivery_counts }
    reclaimed_entries  XAUTOCLAIM's entries: { {id, {field, value, ...}}, ... }
    deleted_ids        pending ids whose entries were deleted (XAUTOCLAIM drops them from the PEL)
    delivery_counts    one integer per reclaimed entry, same order, as counted after this claim
]]
local stream, cursor_key = KEYS[1], KEYS[2]
local group, consumer = ARGV[1], ARGV[2]

-- A cursor that is not an entry id (lost, or written by hand) restarts the pass instead of
-- failing every round from now on.
local cursor = redis.call('GET', cursor_key)
if not cursor or not string.match(cursor, '^%d+%-%d+$') then cursor = '0-0' end

local claimed = redis.call('XAUTOCLAIM', stream, group, consumer, ARGV[3], cursor, 'COUNT', ARGV[4])
local next_cursor, entries, deleted = claimed[1], claimed[2], claimed[3] or {}
redis.call('SET', cursor_key, next_cursor)

-- XAUTOCLAIM does not report delivery counts; a point XPENDING per entry does (O(log n)).
-- Handlers and dead-letter records need the count, and this keeps it in the same round trip.
local counts = {}
for i, entry in ipairs(entries) do
  local row = redis.call('XPENDING', stream, group, entry[1], entry[1], 1)
  if row[1] then counts[i] = row[1][4] else counts[i] = 0 end
end

return { next_cursor, entries, deleted, counts }
