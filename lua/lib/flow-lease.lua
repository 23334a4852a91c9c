--[[
  lib/flow-lease.lua: per-key concurrency leases of one consumer group (SPEC §5.7), shared by
  the claim that takes them (claim.lua) and the settle that returns them (settle.lua).

  One hash per group holds every leased key: field = the flow key's bytes (never a key name,
  so Cluster slots and the name rules are untouched), value = cmsgpack of { holders, waiting }:
    holders  at most `limit` runs, each { token, expires_at, id, id, ... }: the run's token,
             when its lease ends (Redis ms: the run's deadline + the overrun, so a crashed run
             never blocks the key past it, which is within minIdle of its claim), and the
             entries of the key admitted to that run and not yet returned;
    waiting  entries parked behind the key (claim.lua), first parked first, at most
             FLOW_WAITING_MAX: the settle that frees a slot puts the key in the group's ready
             set, and the next claim serves them from there, in order, instead of waiting
             for their not-before (the holder's expiry).
  A holder whose lease ended is dropped by whoever next touches the key (its run ended or
  died); a holder is never changed by another token, so a stale run can never free a slot it
  lost (the fence: its settle finds no holder, counts it, and leaves the key alone).
]]
local FLOW_WAITING_MAX = 64

-- A key's holders and waiting list from the hash value (absent or unreadable: none).
local function flow_decode(value)
  if not value then return {}, {} end
  local ok, state = pcall(cmsgpack.unpack, value)
  if not ok or type(state) ~= 'table' then return {}, {} end
  return state[1] or {}, state[2] or {}
end

-- The holders still in their lease at `now`, `token`'s always kept (its own run decides for it).
local function flow_live(holders, now, token)
  local live = {}
  for _, holder in ipairs(holders) do
    if holder[1] == token or tonumber(holder[2]) > now then live[#live + 1] = holder end
  end
  return live
end

local function flow_holder_of(holders, token)
  for i, holder in ipairs(holders) do
    if holder[1] == token then return i end
  end
  return nil
end

-- Writes a key's state back, or deletes its field when nothing holds or waits on it.
local function flow_store(lease_key, key, holders, waiting)
  if #holders == 0 and #waiting == 0 then
    redis.call('HDEL', lease_key, key)
  else
    redis.call('HSET', lease_key, key, cmsgpack.pack({ holders, waiting }))
  end
end

-- The position of `id` in a list of ids, looking from `first`; nil when absent.
local function flow_lists_id(list, first, id)
  for i = first, #list do
    if list[i] == id then return i end
  end
  return nil
end

-- Drops `id` from a list of ids starting at `first`; true when it was there.
local function flow_drop_id(list, first, id)
  local at = flow_lists_id(list, first, id)
  if at then table.remove(list, at) end
  return at ~= nil
end
