--[[
  lib/flow-admit.lua (fragment): what only the claim needs of a key's flow state
  (lib/flow-lease.lua describes it): reading a key's queue in id order, taking an entry out
  of it, joining the key's holders, and when the key's earliest lease ends. The settle that
  returns leases never needs these, so it does not carry them.
]]
-- #include lib/flow-lease.lua

-- A padded id (lib/stream-id.lua) back to '<ms>-<seq>': leading zeros dropped, '0' kept.
local function unpadded_id(text)
  local ms, seq = string.match(text, '^(%d+)-(%d+)$')
  return (string.gsub(ms, '^0+(%d)', '%1')) .. '-' .. (string.gsub(seq, '^0+(%d)', '%1'))
end

-- Takes `id` out of `key`'s queue; 1 when it was there.
local function flow_dequeue(queue_key, key, id)
  return redis.call('ZREM', queue_key, flow_member(key, id, 'p'), flow_member(key, id, 'h'))
end

-- The first `n` waiting entries of `key`, in id order: { { id, padded, mark }, ... }.
local function flow_queue_first(queue_key, key, n)
  local prefix = flow_prefix(key)
  local members = redis.call('ZRANGEBYLEX', queue_key, '[' .. prefix, '(' .. prefix .. '\255', 'LIMIT', 0, n)
  local first = {}
  for i, member in ipairs(members) do
    local padded = string.sub(member, #prefix + 1, #prefix + 41)
    first[i] = { unpadded_id(padded), padded, string.sub(member, -1) }
  end
  return first
end

-- The run's holder of the key, joined (a new one while fewer than `limit` hold it) and lasting
-- at least until `expires`; nil when the key is busy.
local function flow_join(state, token, expires, limit)
  local mine = flow_holder_of(state.holders, token)
  if mine == nil then
    if #state.holders >= limit then return nil end
    state.holders[#state.holders + 1] = { token, expires }
    mine = #state.holders
  end
  local holder = state.holders[mine]
  if tonumber(holder[2]) < expires then holder[2] = expires end
  return holder
end

-- When the earliest holder's lease ends (Redis ms); nil when nothing holds the key.
local function flow_free_at(state)
  local at
  for _, holder in ipairs(state.holders) do
    local ends = tonumber(holder[2])
    if at == nil or ends < at then at = ends end
  end
  return at
end
