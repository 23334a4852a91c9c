--[[
  lib/schedule-entry.lua (fragment): how a scheduled event's fields are kept until its move.

  The entry's flat field/value array, exactly as the publisher built and signed it, packed
  with cmsgpack into one value of the schedule's field store (a hash, event_id -> packed
  array). Packing takes the Lua table of the script's own arguments, so every byte and the
  order of the fields come back unchanged (settle.lua keeps a wide dead-lettered entry the
  same way). Only one shape is read back: exactly one array of an even number (>= 2) of
  strings, with nothing after it; anything else (a value written by another hand) is nil.

  pack_schedule_entry(values, first)  values[first..#values] packed
  unpack_schedule_entry(blob)         the flat array, or nil
]]
local function pack_schedule_entry(values, first)
  local fields = {}
  for i = first, #values do fields[#fields + 1] = values[i] end
  return cmsgpack.pack(fields)
end

local function unpack_schedule_entry(blob)
  if type(blob) ~= 'string' then return nil end
  local ok, next_offset, values = pcall(cmsgpack.unpack_one, blob)
  -- next_offset -1: the blob held exactly one object, with no bytes after it.
  if not ok or next_offset ~= -1 or type(values) ~= 'table' then return nil end
  local n = #values
  if n < 2 or n % 2 == 1 then return nil end
  local count = 0
  for _, value in pairs(values) do
    if type(value) ~= 'string' then return nil end
    count = count + 1
  end
  if count ~= n then return nil end
  return values
end
