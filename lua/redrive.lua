--[[
  redrive.lua: move chosen dead-letter records back to their source stream (SPEC §7).

  Each record's orig_<field> values are appended to the source stream as <field>, in their
  recorded order, copied inside Redis so the bytes (payload, signature, traceparent) never
  round-trip through a client: the redriven entry is byte-for-byte the original under a new
  entry id. The signature binds the stream name, never the entry id, so it still verifies.

  Per record, in this order (Lua does not roll back, so every prefix of a failure must leave
  the evidence in place):
    1. XADD the original fields to the source stream
    2. DEL the dead-letter marker, so a new failure writes a new DLT record instead of being
       acked silently as a replay of the old one
    3. XDEL the DLT record: it has been acted on, and deleting it in the same script makes
       redrive at-most-once per record — a second redrive of the same id finds nothing.
  The new entry is now the evidence; if it fails again it is dead-lettered again (new record).

  A record is left untouched when it no longer exists (already redriven, or trimmed), names
  another source stream, or carries no orig_ fields (the source entry had been deleted
  before it was dead-lettered: there is nothing to restore).

  KEYS[1]    source stream (must equal each record's source_stream)
  KEYS[2]    dead-letter stream
  KEYS[2+i]  the marker key of the i-th record (computed by the caller from the record's group
             and source_entry_id: <prefix><group>:<source_entry_id>)
  ARGV[i]    the i-th DLT record id

  Reply: one { status, new_entry_id } per ARGV id, in order
    status  'redriven' | 'missing' | 'foreign' | 'no_original'; new_entry_id is '' unless redriven
]]
local stream, dlt = KEYS[1], KEYS[2]
local PREFIX = 'orig_'

local results = {}
for i, record_id in ipairs(ARGV) do
  local marker = KEYS[i + 2]
  local found = redis.call('XRANGE', dlt, record_id, record_id)
  local status, new_id = 'missing', ''
  if found[1] then
    local fields = found[1][2]
    local source, original = nil, {}
    for f = 1, #fields - 1, 2 do
      local name = fields[f]
      if name == 'source_stream' then
        source = fields[f + 1]
      elseif string.sub(name, 1, #PREFIX) == PREFIX then
        original[#original + 1] = string.sub(name, #PREFIX + 1)
        original[#original + 1] = fields[f + 1]
      end
    end
    if source ~= stream then
      status = 'foreign'
    elseif #original == 0 then
      status = 'no_original'
    else
      new_id = redis.call('XADD', stream, '*', unpack(original))
      redis.call('DEL', marker)
      redis.call('XDEL', dlt, record_id)
      status = 'redriven'
    end
  end
  results[i] = { status, new_id }
end
return results
