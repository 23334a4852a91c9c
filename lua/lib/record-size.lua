--[[
  lib/record-size.lua (fragment): how every writer of a stream records an appended entry's
  size (SPEC §5.1 "Byte budget").

  A claim reads fresh entries without copying them through Lua only when it can prove they
  fit the run's byte allowance (claim.lua, 'native'), and it proves that from these records:
  every entry a recording writer appends counts once in the sizes hash ('appended'), and
  every entry larger than RECORD_SIZE_SMALL bytes leaves one record of its size, ordered by
  entry id (claim.lua weighs each other entry at SMALL, which must equal this constant). The
  writers (append.lua, publish.lua, redrive.lua, the schedule's move) call this in the same
  script as their XADD, so no claim ever sees an entry without its record.

  record_entry_size(sizes_key, large_key, id, values, first)
    sizes_key  hash: 'appended' (entries appended by recording writers), 'large' (records in
               large_key); claim.lua checks both against what Redis reports
    large_key  sorted set, score 0, member = '<ms>-<seq> <bytes>' with both parts of the id
               zero-padded to 20 digits, so members sort in id order
    id         the appended entry's id
    values     the entry's field, value pairs as a flat array (ARGV itself may be passed)
    first      index in values of the first field name (the entry is values[first..#values])
  The size counted is what a claim counts: the id, and every field name and value.
]]
-- #include lib/stream-id.lua

-- Entries up to this size are not recorded one by one (claim.lua counts SMALL for each).
local RECORD_SIZE_SMALL = 1024

local function record_entry_size(sizes_key, large_key, id, values, first)
  local bytes = #id
  for i = first, #values do bytes = bytes + #values[i] end
  redis.call('HINCRBY', sizes_key, 'appended', 1)
  if bytes > RECORD_SIZE_SMALL then
    redis.call('ZADD', large_key, 0, padded_id(id) .. ' ' .. bytes)
    redis.call('HINCRBY', sizes_key, 'large', 1)
  end
end
