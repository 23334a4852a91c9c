--[[
  schedule-cancel.lua: cancel one scheduled event by its event_id (SPEC §5.6).

  Cancel and the move (lib/schedule-move.lua) are each one script, and Redis runs a script
  alone: a cancel that finds the event in the schedule removes it before any move can append
  it (status 1, and it is never appended); one that does not find it changed nothing
  (status 0: the event was moved already, cancelled already, or never scheduled). Never both,
  never half: the index and the fields go together.

  The dedupe record (schedule-publish.lua) of a cancelled event is rewritten from
  'scheduled@<due> <digest>' to 'cancelled@<due> <digest>', keeping its expiry: a retried
  publish of the same event_id inside its window answers "duplicate, cancelled" instead of
  scheduling the event again.

  KEYS[1]  the stream's schedule (sorted set), KEYS[2] its field store (hash)
  KEYS[3]  the event's dedupe record key — optional (absent when the publisher's window is off)
  ARGV[1]  event_id

  Reply: { cancelled, due }
    cancelled  1 removed from the schedule; 0 it was not there
    due        its due time (ms epoch) when cancelled, else -1
]]
local due_key, entries_key, record_key = KEYS[1], KEYS[2], KEYS[3]
local event_id = ARGV[1]

local due = redis.call('ZSCORE', due_key, event_id)
if not due then return { 0, -1 } end
redis.call('ZREM', due_key, event_id)
redis.call('HDEL', entries_key, event_id)
if record_key then
  local record = redis.call('GET', record_key)
  local at, digest = string.match(record or '', '^scheduled@(%d+) (%x+)$')
  if at then redis.call('SET', record_key, 'cancelled@' .. at .. ' ' .. digest, 'KEEPTTL') end
end
return { 1, tonumber(due) }
