--[[
  schedule-list.lua: one page of a stream's scheduled events, earliest due first (SPEC §5.6).
  Read-only. Runs as a script so the index and the fields are read at one instant and the
  packed fields are summarized inside Redis (no binary value crosses a REST transport).

  Pages are by position in the schedule (earliest due first, equal due times in event_id
  order): events moved or cancelled between two calls shift the later pages, so a listing
  taken while the schedule moves can miss or repeat an event at a page boundary — it is a
  view for operators, not a cursor to drive work from.

  KEYS[1]  the stream's schedule (sorted set), KEYS[2] its field store (hash)
  ARGV[1]  offset (integer >= 0), ARGV[2] count (integer >= 1)

  Reply: { total, { { event_id, due, event_type, bytes }, ... } }
    total       events in the schedule
    event_type  the entry's 'event' field ('' when its fields are unreadable)
    bytes       the entry's field names and values, summed (-1 when unreadable)
]]
-- #include lib/schedule-entry.lua

local due_key, entries_key = KEYS[1], KEYS[2]
local offset, count = tonumber(ARGV[1]), tonumber(ARGV[2])

local rows = {}
local page = redis.call('ZRANGE', due_key, offset, offset + count - 1, 'WITHSCORES')
for i = 1, #page - 1, 2 do
  local event_id, due = page[i], tonumber(page[i + 1])
  local fields = unpack_schedule_entry(redis.call('HGET', entries_key, event_id))
  local event_type, bytes = '', -1
  if fields then
    bytes = 0
    for f = 1, #fields, 2 do
      bytes = bytes + #fields[f] + #fields[f + 1]
      if fields[f] == 'event' and event_type == '' then event_type = fields[f + 1] end
    end
  end
  rows[#rows + 1] = { event_id, due, event_type, bytes }
end
return { redis.call('ZCARD', due_key), rows }
