--[[
  lib/schedule-move.lua (fragment): move the due scheduled events of one stream into it
  (SPEC §5.6 "Scheduled delivery"). Included by schedule-move.lua (the move on its own, for
  the CLI and operators) and meant for every poll run's claim script and the trim run.

  The schedule of a stream is two keys on its hash tag (src/schedule/keys.ts):
    due_key      sorted set: member event_id, score its due time (ms epoch, Redis clock)
    entries_key  hash: event_id -> the entry's fields, packed (lib/schedule-entry.lua)

  The promises, and why this code keeps them:
    never early  "due" is decided here, by the Redis clock (TIME, in ms rounded down), never
                 by a client's: an event is due when its score <= now.
    at most once each event is appended, then removed from both keys, in this one script:
                 Redis runs a script alone, so two movers (two runs' claims, a claim and the
                 trim) never both see it due, and a cancel (schedule-cancel.lua, also one
                 script) runs wholly before or wholly after. XADD comes first and its removal
                 right after it, event by event: if a later step fails (Lua does not roll
                 back), every event appended is already out of the schedule.
    never lost   an event leaves the schedule only right after its XADD succeeded; a failed
                 XADD (a stream key of the wrong type, out of memory) aborts the script with
                 the event still scheduled. The one exception is an index entry without
                 readable fields (its hash value deleted or overwritten by another hand):
                 there is nothing to append, so it is removed and counted as dropped, rather
                 than staying due forever and blocking the events behind it.
  The moved entry is appended as every writer appends (lib/record-size.lua), so consumers
  keep reading the stream natively (claim.lua's proof counts it).

  Cost: an empty schedule is one ZRANGE (the head); a schedule with nothing due adds TIME;
  each call moves at most max_moved events and about max_bytes of them (their packed size;
  one event larger than that alone), earliest due first (equal due times in event_id order),
  so a large due backlog — many events, or large ones — is moved over several calls, never in
  one long script (a script that has written cannot be killed).

  Memory: a Redis over maxmemory refuses an XADD (OOM) while the script has written nothing
  yet. The move then stops where it is — the event stays scheduled, due, and the next call
  moves it once memory allows — instead of failing the script around it (a poll run's claim).
  Any other refusal of the XADD still fails the script, with the event scheduled.

  move_due_events(stream, due_key, entries_key, sizes_key, large_key, max_moved, max_bytes)
    stream, sizes_key, large_key  the stream and its size records (lib/record-size.lua)
    max_moved                     most events appended by this call (>= 0; 0 only reads)
    max_bytes                     packed bytes after which the call stops moving (>= 1)
  Returns moved, next_due, dropped:
    moved     events appended to the stream by this call
    next_due  the due time (ms epoch) of the earliest event still scheduled, -1 when none: a
              poller can be woken exactly then (when it is <= now, more were due than
              max_moved allowed)
    dropped   index entries removed because their fields were missing or unreadable
]]
-- #include lib/record-size.lua
-- #include lib/schedule-entry.lua

local function schedule_head(due_key)
  local head = redis.call('ZRANGE', due_key, 0, 0, 'WITHSCORES')
  if head[2] == nil then return -1 end
  return tonumber(head[2])
end

local function move_due_events(stream, due_key, entries_key, sizes_key, large_key, max_moved, max_bytes)
  local next_due = schedule_head(due_key)
  if next_due < 0 or max_moved < 1 then return 0, next_due, 0 end
  local time = redis.call('TIME')
  -- Rounded down: an event due at t ms is never appended before t by this clock.
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  if next_due > now then return 0, next_due, 0 end
  local due = redis.call('ZRANGEBYSCORE', due_key, '-inf', now, 'LIMIT', 0, max_moved)
  local moved, dropped, bytes = 0, 0, 0
  for _, event_id in ipairs(due) do
    local packed = redis.call('HGET', entries_key, event_id)
    if moved > 0 and type(packed) == 'string' and bytes + #packed > max_bytes then break end
    local fields = unpack_schedule_entry(packed)
    if fields then
      local id = redis.pcall('XADD', stream, '*', unpack(fields))
      if type(id) == 'table' and id.err then
        if string.find(id.err, 'OOM', 1, true) == 1 then break end
        error(id)
      end
      bytes = bytes + #packed
      redis.call('ZREM', due_key, event_id)
      redis.call('HDEL', entries_key, event_id)
      record_entry_size(sizes_key, large_key, id, fields, 1)
      moved = moved + 1
    else
      redis.call('ZREM', due_key, event_id)
      redis.call('HDEL', entries_key, event_id)
      dropped = dropped + 1
    end
  end
  return moved, schedule_head(due_key), dropped
end
