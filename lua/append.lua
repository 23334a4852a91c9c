--[[
  append.lua: append one entry and record its size (SPEC §5.1 "Byte budget").

  A claim reads fresh entries without copying them through Lua only when it can prove they
  fit the run's byte allowance (claim.lua, 'native'): every entry of the stream must have
  been appended by a writer that records sizes. This is that writer for entries appended
  without a publish-dedupe record (publish.lua records sizes the same way, and so does
  redrive.lua). The count and the size record are written in the same script as the XADD,
  so no claim ever sees an entry without its record.

  KEYS[1]  stream
  KEYS[2]  sizes hash (field 'appended': entries appended by recording writers)
  KEYS[3]  large entries: sorted set, score = the entry's ordinal among the recorded appends (the
           'appended' count it made), member = '<ordinal> <bytes>'
  ARGV     the entry's field, value pairs, in order

  Reply: the new entry id
]]
-- Entries up to this size are not recorded one by one (claim.lua counts SMALL for each).
local SMALL = 1024

local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV))
local bytes = #id
for i = 1, #ARGV do bytes = bytes + #ARGV[i] end
local ordinal = redis.call('HINCRBY', KEYS[2], 'appended', 1)
if bytes > SMALL then redis.call('ZADD', KEYS[3], ordinal, ordinal .. ' ' .. bytes) end
return id
