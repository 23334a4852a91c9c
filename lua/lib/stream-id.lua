--[[
  lib/stream-id.lua (fragment): stream entry ids as fixed-width text, so that ids compare as
  strings in id order (sorted-set members under ZRANGEBYLEX, the flow queue's order).

  padded_id(id)  '<ms>-<seq>' -> both parts zero-padded to 20 digits (41 characters)
  (lib/flow-lease.lua, the one reader of ids back, holds the inverse.)
]]
local function padded_id(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return string.rep('0', 20 - #ms) .. ms .. '-' .. string.rep('0', 20 - #seq) .. seq
end

