--[[
  publish.lua: append one event unless the publish-dedupe window already holds it.

  A producer's outbox retries a publish whose reply it never saw; without this window each
  retry would append another entry for the same event_id. The record key holds the entry
  id of the first append, so a retry gets that id back and appends nothing. The record also
  holds a digest of the event's body (its first ARGV[2] field/value pairs: type, id,
  payload), so the same event_id with a DIFFERENT body is told apart from a true repeat:
  that is a client reusing an idempotency key, and acking it as a duplicate would silently
  drop the second event. The record is written after XADD: if XADD fails (e.g. WRONGTYPE)
  nothing at all is written, and a record never points at an entry that was not appended.

  KEYS[1]  stream
  KEYS[2]  dedupe record key, <stream>:pub:<event_id> (same hash tag as the stream)
  KEYS[3]  the stream's sizes hash, KEYS[4] its large-entry set: the appended entry's size is
           recorded as every writer records it (lib/record-size.lua; claim.lua relies on it)
  KEYS[5]  optional: the stream's schedule (sorted set), KEYS[6] its field store (hash). Given,
           an event_id still waiting in the schedule is a duplicate (or a reused key) of it
           even when its record has expired — a move later than the whole window — so the
           publish cannot append a second copy beside the one the move will append
  ARGV[1]  window, seconds (positive integer): the record's TTL
  ARGV[2]  how many leading field/value pairs make up the body the digest covers
  ARGV[3..] the entry's field, value pairs, in order

  Reply: { entry_id, status }
    entry_id   the appended entry's id, or the original one when the record existed
    status     0 appended; 1 duplicate (record with the same body, nothing appended; the
               record is rewritten as it was, see below); 2 key reused (record with a
               different body, nothing appended)
  Records written before digests existed hold only the entry id: treated as duplicates.
  An event still in the schedule (KEYS[5]) answers 'scheduled@<due ms>' the same way.
  A record of a scheduled event (schedule-publish.lua) holds 'scheduled@<due ms>' or
  'cancelled@<due ms>' in place of the entry id: a publish of its event_id is a duplicate
  (or a reused key) of that scheduled event, and the reply's entry_id is that text.
]]
-- #include lib/record-size.lua
-- #include lib/publish-digest.lua
-- #include lib/schedule-entry.lua
local digest = publish_digest(ARGV, 3, tonumber(ARGV[2]))

local record = redis.call('GET', KEYS[2])
if record then
  local original, stored = string.match(record, '^(%S+) (%x+)$')
  if original and stored ~= digest then
    return { original, 2 }
  end
  -- A duplicate rewrites its record unchanged (KEEPTTL: the window is not extended): a write
  -- of this connection after the original append, so a WAIT / WAITAOF sent behind this call
  -- (durability on request) waits for the original too, whichever connection appended it.
  redis.call('SET', KEYS[2], record, 'KEEPTTL')
  return { original or record, 1 }
end

if KEYS[5] then
  local event_id
  for i = 3, 2 + 2 * tonumber(ARGV[2]), 2 do
    if ARGV[i] == 'event_id' then event_id = ARGV[i + 1] end
  end
  local scheduled_at = event_id and redis.call('ZSCORE', KEYS[5], event_id)
  if scheduled_at then
    local fields = unpack_schedule_entry(redis.call('HGET', KEYS[6], event_id))
    if fields and publish_digest(fields, 1, tonumber(ARGV[2])) ~= digest then return { 'scheduled@' .. scheduled_at, 2 } end
    return { 'scheduled@' .. scheduled_at, 1 }
  end
end

local entry_id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 3))
redis.call('SET', KEYS[2], entry_id .. ' ' .. digest, 'EX', ARGV[1])
record_entry_size(KEYS[3], KEYS[4], entry_id, ARGV, 3)
return { entry_id, 0 }
