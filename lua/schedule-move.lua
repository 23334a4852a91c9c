--[[
  schedule-move.lua: move a stream's due scheduled events into it, on its own (SPEC §5.6).

  The move itself is lib/schedule-move.lua (read its header for the promises: never early
  by the Redis clock, each event appended at most once, never lost). Poll runs and the trim
  run include that fragment in their own scripts; this script runs it alone, for the CLI
  (`saga-streams schedule move`), operators and tests.

  KEYS[1]  stream
  KEYS[2]  the stream's schedule: sorted set, member event_id, score due time (ms epoch)
  KEYS[3]  the schedule's field store: hash, event_id -> packed entry fields
  KEYS[4]  the stream's sizes hash, KEYS[5] its large-entry set (lib/record-size.lua)
  ARGV[1]  most events to move in this call (integer >= 0)
  ARGV[2]  packed bytes after which the call stops moving (integer >= 1; one larger event alone)

  Reply: { moved, next_due, dropped } (see lib/schedule-move.lua; next_due -1: none)
]]
-- #include lib/schedule-move.lua

local max_moved = tonumber(ARGV[1])
if max_moved == nil or max_moved < 0 or max_moved % 1 ~= 0 then
  return redis.error_reply('ERR schedule-move: ARGV[1] (max moved) must be an integer >= 0')
end
local max_bytes = tonumber(ARGV[2])
if max_bytes == nil or max_bytes < 1 then
  return redis.error_reply('ERR schedule-move: ARGV[2] (max bytes) must be an integer >= 1')
end
local moved, next_due, dropped = move_due_events(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], max_moved, max_bytes)
return { moved, next_due, dropped }
