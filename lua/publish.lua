--[[
  publish.lua: append one event unless the publish-dedupe window already holds it.

  A producer's outbox retries a publish whose reply it never saw; without this window each
  retry would append another entry for the same event_id. The record key holds the entry
  id of the first append, so a retry gets that id back and appends nothing. The record is
  written after XADD: if XADD fails (e.g. WRONGTYPE) nothing at all is written, and a
  record never points at an entry that was not appended.

  KEYS[1]  stream
  KEYS[2]  dedupe record key, <stream>:pub:<event_id> (same hash tag as the stream)
  ARGV[1]  window, seconds (positive integer): the record's TTL
  ARGV[2..] the entry's field, value pairs, in order

  Reply: { entry_id, duplicate }
    entry_id   the appended entry's id, or the original one when the record existed
    duplicate  1 when the record existed and nothing was appended, else 0
]]
local original = redis.call('GET', KEYS[2])
if original then
  return { original, 1 }
end

local entry_id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 2))
redis.call('SET', KEYS[2], entry_id, 'EX', ARGV[1])
return { entry_id, 0 }
