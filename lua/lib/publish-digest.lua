--[[
  lib/publish-digest.lua (fragment): the digest a publish-dedupe record keeps of an event's
  body (publish.lua, schedule-publish.lua), so the same event_id with a different body is
  told apart from a true repeat. Both scripts must compute it alike: an event scheduled and
  then published again at once (or the other way round) is compared by this digest.

  publish_digest(values, first, body_pairs)
    values      flat field, value array (ARGV itself may be passed)
    first       index of the first field name
    body_pairs  how many leading field/value pairs make up the body (type, id, payload)
  Returns the SHA-1 hex of the body's values, each length-prefixed, so no two different
  bodies concatenate to the same text.
]]
local function publish_digest(values, first, body_pairs)
  local parts = {}
  for i = first, math.min(#values, first - 1 + 2 * body_pairs) do
    parts[#parts + 1] = #values[i] .. ':' .. values[i]
  end
  return redis.sha1hex(table.concat(parts))
end
