--[[
  lib/stream-id.lua (fragment): stream entry ids as fixed-width text, so that ids compare as
  strings in id order (sorted-set members under ZRANGEBYLEX, the flow queue's order).

  padded_id(id)      '<ms>-<seq>' -> both parts zero-padded to 20 digits (41 characters)
  unpadded_id(text)  the inverse: leading zeros dropped, '0' kept
]]
local function padded_id(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return string.rep('0', 20 - #ms) .. ms .. '-' .. string.rep('0', 20 - #seq) .. seq
end

local function unpadded_id(text)
  local ms, seq = string.match(text, '^(%d+)-(%d+)$')
  return (string.gsub(ms, '^0+(%d)', '%1')) .. '-' .. (string.gsub(seq, '^0+(%d)', '%1'))
end
