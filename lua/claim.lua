--[[
  claim.lua: reclaim idle pending entries for one consumer, resuming the PEL scan
  where the previous (possibly stateless, possibly other-process) run stopped.

  Why the cursor lives in Redis: a poll function keeps no memory between runs. If each
  run restarted XAUTOCLAIM at 0-0, a first page of entries that are always retained would
  be reclaimed forever and every entry behind it would starve. Storing the returned
  next-start id makes successive runs page through the whole PEL; 0-0 means a full pass
  finished and the next run starts over.

  A stored cursor this script cannot use restarts the pass at 0-0 instead of failing every
  round from then on (it would otherwise be a permanent outage of the consumer):
    - not an entry id (lost, written by hand): the pass restarts, and the next cursor is
      stored over it;
    - an entry id XAUTOCLAIM rejects (e.g. 99999999999999999999999-0 overflows 64 bits):
      XAUTOCLAIM runs through redis.pcall, the pass restarts at 0-0 and the next cursor is
      stored over it. An error with cursor 0-0 is not the cursor's fault (NOGROUP, a
      stream key of the wrong type): it is returned, and nothing is written;
    - the key holds another type (GET fails with WRONGTYPE): every pass starts at 0-0, and
      the key is left untouched. Overwriting it would destroy a value this library did not
      write (an explicit keys.cursor can name any key); restarting at 0-0 still reclaims
      every idle entry, only without paging, so the reply flags it for the operator.

  Fresh entries (XREADGROUP >) are deliberately NOT read here: the caller pipelines that
  read beside this script in the same round trip, so large payloads never get copied
  through the Lua VM (that copy measured ~3x the Redis CPU of a plain read).

  KEYS[1]  source stream
  KEYS[2]  cursor key (string; absent = 0-0)
  ARGV[1]  group
  ARGV[2]  consumer
  ARGV[3]  min idle, ms
  ARGV[4]  max entries to reclaim (XAUTOCLAIM COUNT)

  Reply: { next_cursor, reclaimed_entries, deleted_ids, delivery_counts, cursor_note }
    reclaimed_entries  XAUTOCLAIM's entries: { {id, {field, value, ...}}, ... }
    deleted_ids        pending ids whose entries were deleted (XAUTOCLAIM drops them from the PEL)
    delivery_counts    one integer per reclaimed entry, same order, as counted after this claim
    cursor_note        '' | 'reset' (an unusable stored cursor was replaced) |
                       'wrong_type' (the cursor key holds another type; left alone, not stored)
]]
local stream, cursor_key = KEYS[1], KEYS[2]
local group, consumer = ARGV[1], ARGV[2]

local function is_error(reply)
  return type(reply) == 'table' and reply.err ~= nil
end

local cursor, note = '0-0', ''
local stored = redis.pcall('GET', cursor_key)
if is_error(stored) then
  note = 'wrong_type'
elseif stored and string.match(stored, '^%d+%-%d+$') then
  cursor = stored
elseif stored then
  note = 'reset'
end

local function autoclaim(start)
  return redis.pcall('XAUTOCLAIM', stream, group, consumer, ARGV[3], start, 'COUNT', ARGV[4])
end
local claimed = autoclaim(cursor)
if is_error(claimed) and cursor ~= '0-0' then
  if note == '' then note = 'reset' end
  claimed = autoclaim('0-0')
end
if is_error(claimed) then return claimed end

local next_cursor, entries, deleted = claimed[1], claimed[2], claimed[3] or {}
if note ~= 'wrong_type' then redis.call('SET', cursor_key, next_cursor) end

-- XAUTOCLAIM does not report delivery counts; a point XPENDING per entry does (O(log n)).
-- Handlers and dead-letter records need the count, and this keeps it in the same round trip.
local counts = {}
for i, entry in ipairs(entries) do
  local row = redis.call('XPENDING', stream, group, entry[1], entry[1], 1)
  if row[1] then counts[i] = row[1][4] else counts[i] = 0 end
end

return { next_cursor, entries, deleted, counts, note }
