--[[
  append.lua: append one entry and record its size (SPEC §5.1 "Byte budget").

  A claim reads fresh entries without copying them through Lua only when it can prove they
  fit the run's byte allowance (claim.lua, 'native'): every entry of the stream must have
  been appended by a writer that records sizes. This is that writer for entries appended
  without a publish-dedupe record (publish.lua, redrive.lua and the schedule's move record
  sizes the same way: lib/record-size.lua). The count and the size record are written in
  the same script as the XADD, so no claim ever sees an entry without its record.

  KEYS[1]  stream
  KEYS[2]  sizes hash: the counts of lib/record-size.lua, which claim.lua checks against what
           Redis reports
  KEYS[3]  size and flow key records: sorted set, score 0, in id order (lib/record-size.lua)
  ARGV     the entry's field, value pairs, in order

  Reply: the new entry id
]]
-- #include lib/record-size.lua

local id = redis.call('XADD', KEYS[1], '*', unpack(ARGV))
record_entry_size(KEYS[2], KEYS[3], id, ARGV, 1)
return id
