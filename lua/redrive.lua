--[[
  redrive.lua: move chosen dead-letter records back to their source stream (SPEC §7).

  Each record's original entry is appended to the source stream, in its recorded order,
  copied inside Redis so the bytes (payload, signature, traceparent) never round-trip
  through a client: the redriven entry is byte-for-byte the original under a new entry id.
  The signature binds the stream name, never the entry id, so it still verifies.

  A record holds the original in one of two forms (settle.lua):
    - orig_<field> values, one per original field;
    - packed_original: the flat field/value array packed with cmsgpack (an entry too wide
      to copy field by field). It must decode to exactly one array of an even number (>= 2)
      of strings, or the record is refused.
  Lua's unpack() stops near 8,000 values, and redis.call(unpack(t)) with it, so a wide
  entry cannot be re-appended through one unpack(). xadd_all below passes the values as
  the varargs of a tail-recursive function instead: the tail of the array goes in through
  one unpack(), the rest is prepended a fixed number at a time, each step a tail call that
  reuses the frame, so the Lua stack (not the C stack unpack() is bounded by) carries
  them. Each step copies the arguments so far: the cost grows with width squared, so
  entries over MAX_RESTORE_FIELDS fields (a 10,000-field redrive took ~60 ms of Redis time here) are
  refused rather than allowed to block Redis.

  Per record, in this order (Lua does not roll back, so every prefix of a failure must leave
  the evidence in place):
    1. XADD the original fields to the source stream
    2. DEL the dead-letter marker, so a new failure writes a new DLT record instead of being
       acked silently as a replay of the old one
    3. XDEL the DLT record: it has been acted on, and deleting it in the same script makes
       redrive at-most-once per record — a second redrive of the same id finds nothing.
  The new entry is now the evidence; if it fails again it is dead-lettered again (new record).
  Every check that can refuse a record runs before step 1: a refused record, and its
  marker, are left exactly as they were.

  A record is left untouched when it no longer exists (already redriven, or trimmed), names
  another source stream, carries no original (the source entry had been deleted before it
  was dead-lettered: there is nothing to restore), or cannot be restored exactly:
    packed_unreadable   packed_original does not decode to a flat array of strings
    ambiguous_original  both packed_original and orig_ fields (settle never writes both)
    fields_omitted      written by an older version that kept only a count of the fields
                        (orig_omitted_fields): the fields themselves are gone
    too_wide            more than MAX_RESTORE_FIELDS fields

  KEYS[1]    source stream (must equal each record's source_stream)
  KEYS[2]    dead-letter stream
  KEYS[3]    the source stream's sizes hash, KEYS[4] its large-entry set: the appended entry's
             size is recorded as every writer records it (lib/record-size.lua; claim.lua
             relies on every writer doing so)
  KEYS[4+i]  the marker key of the i-th record (computed by the caller from the record's group
             and source_entry_id: <prefix><group>:<source_entry_id>)
  ARGV[i]    the i-th DLT record id

  Reply: one { status, new_entry_id, detail } per ARGV id, in order
    status  'redriven' | 'missing' | 'foreign' | 'no_original' | 'unrestorable'
    new_entry_id  '' unless redriven
    detail  '' unless unrestorable: one of the reasons above
]]
-- #include lib/record-size.lua
local stream, dlt, sizes_key, large_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local PREFIX = 'orig_'
local PACKED_FIELD = 'packed_original'
-- Older versions recorded an entry over 3,900 fields as this one field and a count.
local OMITTED_FIELD, OMITTED_ABOVE = 'omitted_fields', 3900
-- Values passed through one unpack(): well under the ~8,000 it allows.
local UNPACK_MAX = 7000
local MAX_RESTORE_FIELDS = 10000

-- XADD key * <values>: see the header for why values[1..i] are prepended by tail calls.
local function xadd_prepending(i, values, key, ...)
  if i == 0 then return redis.call('XADD', key, '*', ...) end
  if i >= 32 then
    local v, b = values, i - 32
    return xadd_prepending(b, v, key,
      v[b + 1], v[b + 2], v[b + 3], v[b + 4], v[b + 5], v[b + 6], v[b + 7], v[b + 8],
      v[b + 9], v[b + 10], v[b + 11], v[b + 12], v[b + 13], v[b + 14], v[b + 15], v[b + 16],
      v[b + 17], v[b + 18], v[b + 19], v[b + 20], v[b + 21], v[b + 22], v[b + 23], v[b + 24],
      v[b + 25], v[b + 26], v[b + 27], v[b + 28], v[b + 29], v[b + 30], v[b + 31], v[b + 32], ...)
  end
  return xadd_prepending(i - 1, values, key, values[i], ...)
end

local function xadd_all(key, values)
  local first = math.max(1, #values - UNPACK_MAX + 1)
  return xadd_prepending(first - 1, values, key, unpack(values, first, #values))
end

-- The packed flat field/value array, or nil when the value is anything else.
local function unpacked(blob)
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

-- The original entry's flat field/value array, or nil and why it cannot be restored.
local function original_of(fields)
  local source, original, packed = nil, {}, nil
  for f = 1, #fields - 1, 2 do
    local name = fields[f]
    if name == 'source_stream' then
      source = fields[f + 1]
    elseif name == PACKED_FIELD then
      packed = fields[f + 1]
    elseif string.sub(name, 1, #PREFIX) == PREFIX then
      original[#original + 1] = string.sub(name, #PREFIX + 1)
      original[#original + 1] = fields[f + 1]
    end
  end
  if source ~= stream then return nil, 'foreign', '' end
  if packed ~= nil then
    if #original > 0 then return nil, 'unrestorable', 'ambiguous_original' end
    original = unpacked(packed)
    if original == nil then return nil, 'unrestorable', 'packed_unreadable' end
  elseif #original == 0 then
    return nil, 'no_original', ''
  elseif #original == 2 and original[1] == OMITTED_FIELD and string.match(original[2], '^%d+$')
      and tonumber(original[2]) > OMITTED_ABOVE then
    return nil, 'unrestorable', 'fields_omitted'
  end
  if #original > 2 * MAX_RESTORE_FIELDS then return nil, 'unrestorable', 'too_wide' end
  return original
end

local results = {}
for i, record_id in ipairs(ARGV) do
  local marker = KEYS[i + 4]
  local found = redis.call('XRANGE', dlt, record_id, record_id)
  local status, new_id, detail = 'missing', '', ''
  if found[1] then
    local original
    original, status, detail = original_of(found[1][2])
    if original then
      new_id = xadd_all(stream, original)
      record_entry_size(sizes_key, large_key, new_id, original, 1)
      redis.call('DEL', marker)
      redis.call('XDEL', dlt, record_id)
      status, detail = 'redriven', ''
    end
  end
  results[i] = { status, new_id, detail }
end
return results
