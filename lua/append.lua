--[[
  append.lua: append one entry and record its size (SPEC §5.1 "Byte budget").

  A claim reads fresh entries without copying them through Lua only when it can prove they
  fit the run's byte allowance (claim.lua, 'native'): every entry of the stream must have
  been appended by a writer that records sizes. This is that writer for entries appended
  without a publish-dedupe record (publish.lua records sizes the same way, and so does
  redrive.lua). The count and the size record are written in the same script as the XADD,
  so no claim ever sees an entry without its record.

  KEYS[1]  stream
  KEYS[2]  sizes hash: 'appended' (entries appended by recording writers), 'large' (records
           in KEYS[3]); claim.lua checks both against what Redis reports
  KEYS[3]  large-entry records: sorted set, score 0, member = '<ms>-<seq> <bytes>' with both
           parts of the id zero-padded to 20 digits, so members sort in id order
  ARGV     the entry's field, value pairs, in order

  Reply: the new entry id
]]
-- Entries up to this size are not recorded one by one (claim.lua counts SMALL for each).
local SMALL = 1024

local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV))
local bytes = #id
for i = 1, #ARGV do bytes = bytes + #ARGV[i] end
redis.call('HINCRBY', KEYS[2], 'appended', 1)
if bytes > SMALL then
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  redis.call('ZADD', KEYS[3], 0, string.rep('0', 20 - #ms) .. ms .. '-' .. string.rep('0', 20 - #seq) .. seq .. ' ' .. bytes)
  redis.call('HINCRBY', KEYS[2], 'large', 1)
end
return id
