--[[
  lib/record-size.lua (fragment): how every writer of a stream records an appended entry's
  size and flow key (SPEC §5.1 "Byte budget", §5.7).

  A claim reads fresh entries without copying them through Lua only when it can prove they
  fit the run's byte allowance (claim.lua, 'native'), and it proves that from these records:
  every entry a recording writer appends counts once in the sizes hash, and every entry
  larger than RECORD_SIZE_SMALL bytes leaves one record of its size, ordered by entry id
  (claim.lua weighs each other entry at SMALL, which must equal this constant). The writers
  (append.lua, publish.lua, redrive.lua, the schedule's move) call this in the same script as
  their XADD, so no claim ever sees an entry without its records.

  Flow keys are recorded the same way, so that a claim with flow leases can read natively
  too and admit what it read from the records alone (claim.lua, 'admit'): an entry with a
  flow_key field leaves one record of its key (the last flow_key field, the one every reader
  takes). Each append counts once, by kind: 'plain' (no flow key) or 'keyed'; writers from
  before key records counted every append as 'appended', which this writer never touches. A
  claim with flow leases reads natively only while nothing counted as 'appended' is unread
  (claim.lua): an older writer's keyed entry has no key record. So an unkeyed append costs
  what it did (one count), and a keyed one one record more.

  record_entry_size(sizes_key, large_key, id, values, first)
    sizes_key  hash: the counts 'plain', 'keyed' (and 'appended', older writers'), 'large'
               (size records in large_key), 'trimmed' and 'keyed_trimmed' (retention.lua);
               claim.lua checks them against what Redis reports
    large_key  sorted set, score 0, two kinds of member, each sorting in id order:
                 size record  '<ms>-<seq> <bytes>', both parts of the id zero-padded to 20
                              digits (lib/stream-id.lua)
                 key record   'k<ms>-<seq> <id> <flow key>', the first id padded alike, the
                              second as Redis writes it (the claim need not unpad it); every
                              key record sorts after every size record
    id         the appended entry's id
    values     the entry's field, value pairs as a flat array (ARGV itself may be passed)
    first      index in values of the first field name (the entry is values[first..#values])
  The size counted is what a claim counts: the id, and every field name and value.
]]
-- #include lib/stream-id.lua

-- Entries up to this size are not recorded one by one (claim.lua counts SMALL for each).
local RECORD_SIZE_SMALL = 1024

local function record_entry_size(sizes_key, large_key, id, values, first)
  local bytes, flow_key = #id, nil
  for i = first, #values - 1, 2 do
    bytes = bytes + #values[i] + #values[i + 1]
    if values[i] == 'flow_key' then flow_key = values[i + 1] end
  end
  -- An empty flow_key names no key (every reader takes it so).
  if flow_key and flow_key ~= '' then
    redis.call('ZADD', large_key, 0, 'k' .. padded_id(id) .. ' ' .. id .. ' ' .. flow_key)
    redis.call('HINCRBY', sizes_key, 'keyed', 1)
  else
    redis.call('HINCRBY', sizes_key, 'plain', 1)
  end
  if bytes > RECORD_SIZE_SMALL then
    redis.call('ZADD', large_key, 0, padded_id(id) .. ' ' .. bytes)
    redis.call('HINCRBY', sizes_key, 'large', 1)
  end
end
