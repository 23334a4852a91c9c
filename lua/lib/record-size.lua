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

  Flow keys (SPEC §5.7). An entry that names a flow key (its last `flow_key` field, the value
  the client and claim.lua read; '' names none) leaves a record too, whatever its size:
  member = '<padded id> <bytes> <position> <id> <key>', where position is the entry's number
  in the stream (the 'appended' count after it: Redis's entries-added while the counts are
  intact, claim.lua's proof) and id the entry id as Redis writes it (the claim then splits the
  member at its first spaces instead of matching patterns or unpadding the id, about 1 µs of
  Redis per entry less). A claim with flow leases then knows which of the next entries
  name which key without copying them through Lua, and admits or parks them before a native
  read delivers them. 'flow_recorded' counts the appends of writers that keep these records:
  a claim relies on them only while it equals 'appended' (an older writer records none).
]]
-- #include lib/stream-id.lua

-- Entries up to this size are not recorded one by one (claim.lua counts SMALL for each).
local RECORD_SIZE_SMALL = 1024

local function record_entry_size(sizes_key, large_key, id, values, first)
  local bytes, flow_key = #id, ''
  for i = first, #values do bytes = bytes + #values[i] end
  for i = first, #values - 1, 2 do
    if values[i] == 'flow_key' then flow_key = values[i + 1] end
  end
  local position = redis.call('HINCRBY', sizes_key, 'appended', 1)
  redis.call('HINCRBY', sizes_key, 'flow_recorded', 1)
  if flow_key ~= '' then
    redis.call('ZADD', large_key, 0, padded_id(id) .. ' ' .. bytes .. ' ' .. position .. ' ' .. id .. ' ' .. flow_key)
    redis.call('HINCRBY', sizes_key, 'large', 1)
  elseif bytes > RECORD_SIZE_SMALL then
    redis.call('ZADD', large_key, 0, padded_id(id) .. ' ' .. bytes)
    redis.call('HINCRBY', sizes_key, 'large', 1)
  end
end
