--[[
  lib/flow-lease.lua: per-key concurrency leases and per-key queues of one consumer group
  (SPEC §5.7), shared by the claim that takes leases (claim.lua, through lib/flow-admit.lua,
  which adds what only the claim needs) and the settle that returns them (settle.lua).

  Three keys per group; a flow key's bytes are only ever a hash field or part of a member,
  never a key name, so Cluster slots and the name rules are untouched:
    lease hash   field = the flow key, value = cmsgpack { holders, waiting }:
                 holders  at most `limit` runs, each { token, expires_at, id, id, ... }: the
                          run's token, when its lease ends (Redis ms: the run's deadline + the
                          overrun, so a crashed run never blocks the key past it, which is
                          within minIdle of its claim), and the entries of the key admitted to
                          that run and not yet returned;
                 waiting  how many of the key's entries are in the queue;
                 tat      (optional) the key's own rate limit: its theoretical arrival time,
                          Redis ms (GCRA, claim.lua's header);
                 hold     (optional) no entry of the key starts before this, Redis ms: a
                          handler's deferral (retryAfterMs) under a per-key rate limit.
                 A field goes when nothing holds or waits on its key and both times passed.
    queue        a sorted set, every score 0, member = flow_member(key, id, mark): the key's
                 waiting entries in id order (lex order: the key's bytes behind their length,
                 then the padded id), each marked
                   'p' parked: claimed while the key was busy or behind an earlier waiting
                       entry, put back as if never claimed; served when its turn comes;
                   'h' a head (strict order): retained by its handler, left unseen or held by
                       a run that ended, or still pending in a holder whose lease ran out;
                       served only once due (its backoff, its deferral).
    ready        a sorted set of flow keys whose slot is free (or held by the run that parked
                 their entries) while entries wait, scored by arrival: keys are served in the
                 order they became ready, and a key served goes to the back (round robin; the
                 fairness bound in claim.lua's header rests on it).
  Admission is first in, first out per key: an entry is admitted only when no earlier entry of
  its key waits, and under the run's own holder or a new one while fewer than `limit` hold the
  key. A key whose slot is free while entries wait is put at the back of the group's ready
  queue, which the next claim serves first. Strict order adds the heads, so a key whose earliest
  pending entry was retained stays closed to every later entry until that one settles.

  A holder whose lease ended is dropped by whoever next touches the key (its run ended or
  died) — under strict order after its still-pending entries became heads, so a dead run's
  entries are never overtaken. A holder is never changed by another token, so a stale run
  can never free a slot it lost (the fence: its settle finds no holder, counts it, and
  leaves the key alone).
]]
-- #include lib/stream-id.lua

-- A key's holders, waiting count, tat and hold from the hash value (absent or unreadable: none).
local function flow_decode(value)
  if not value then return {}, 0, 0, 0 end
  local ok, state = pcall(cmsgpack.unpack, value)
  if not ok or type(state) ~= 'table' then return {}, 0, 0, 0 end
  return state[1] or {}, tonumber(state[2]) or 0, tonumber(state[3]) or 0, tonumber(state[4]) or 0
end

-- The queue's members of `key` start with this: its length, fixed width, so no key is a
-- prefix of another's members.
local function flow_prefix(key)
  return string.format('%05d', #key) .. key .. '|'
end

local function flow_member(key, id, mark)
  return flow_prefix(key) .. padded_id(id) .. mark
end

-- Adds `id` to `key`'s queue with `mark` (replacing the other mark); 1 when it was not there.
local function flow_enqueue(queue_key, key, id, mark)
  local other = mark == 'p' and 'h' or 'p'
  local replaced = redis.call('ZREM', queue_key, flow_member(key, id, other))
  return redis.call('ZADD', queue_key, 0, flow_member(key, id, mark)) - replaced
end

-- Strict order: the still-pending entries of a holder whose lease ran out become heads of
-- the key's queue (its run died or ended with them unsettled). Returns how many were added.
local function flow_convert(stream, group, queue_key, key, holder)
  local added = 0
  for i = 3, #holder do
    local id = holder[i]
    if redis.call('XPENDING', stream, group, id, id, 1)[1] then added = added + flow_enqueue(queue_key, key, id, 'h') end
  end
  return added
end

-- A key's state as the run `token` sees it at `now`: the holders still in their lease (its own
-- always kept: its run decides for it), and the waiting count. With `strict`, a dropped
-- holder's pending entries are queued first (flow_convert); changed is then true.
local function flow_open(value, now, token, strict, stream, group, queue_key, key)
  local holders, waiting, tat, hold = flow_decode(value)
  local state = { holders = {}, waiting = waiting, changed = false, tat = tat, hold = hold, now = now }
  for _, holder in ipairs(holders) do
    if holder[1] == token or tonumber(holder[2]) > now then
      state.holders[#state.holders + 1] = holder
    else
      state.changed = true
      if strict then state.waiting = state.waiting + flow_convert(stream, group, queue_key, key, holder) end
    end
  end
  return state
end

local function flow_holder_of(holders, token)
  for i, holder in ipairs(holders) do
    if holder[1] == token then return i end
  end
  return nil
end

-- Drops the run's holder when it holds no entry (its slot frees).
local function flow_leave_if_empty(state, token)
  local mine = flow_holder_of(state.holders, token)
  if mine and #state.holders[mine] <= 2 then table.remove(state.holders, mine) end
end

-- The lease hash stays in hashtable encoding while it exists: in a listpack (Redis's encoding
-- up to hash-max-listpack-entries fields of at most hash-max-listpack-value bytes) every field
-- is found by a scan, a fifth of flow's Redis work at 100-200 leased keys. A value longer than
-- the default 64 B makes Redis convert the hash when it is written, so the field '' (never a
-- flow key: an empty flow_key names none) holds one while any key is leased, and goes with the
-- last key: an idle group keeps no lease hash.
local FLOW_ENCODING_FIELD = ''
local FLOW_ENCODING_VALUE = 'saga-streams: keeps this hash a hashtable while keys are leased (lib/flow-lease.lua) '
FLOW_ENCODING_VALUE = FLOW_ENCODING_VALUE .. string.rep('.', 256 - #FLOW_ENCODING_VALUE)

-- The lease values of the common states, written byte for byte as cmsgpack.pack writes them
-- (test/redis/flow-lease-bytes.test.ts compares the two over every shape), so no state has to
-- be built as Lua tables to be written: those tables, not the packing, were most of what an
-- uncontended key cost the claim. Readers still decode with cmsgpack.
-- MessagePack of values that repeat within one script call (the run's token, its lease end).
local flow_packed_once = {}
local function flow_pack_once(value)
  local bytes = flow_packed_once[value] or cmsgpack.pack(value)
  flow_packed_once[value] = bytes
  return bytes
end

-- An entry id's MessagePack (a str: fixstr below 32 bytes, else str8; ids are at most 41).
local function flow_pack_id(id)
  local n = #id
  if n < 32 then return string.char(0xa0 + n) .. id end
  if n < 256 then return string.char(0xd9, n) .. id end
  return cmsgpack.pack(id)
end

-- The MessagePack of ids[first..last], one after another (as cmsgpack.pack(id, id, ...)).
local function flow_pack_ids(ids, first, last)
  if first == last then return flow_pack_id(ids[first]) end
  local parts = {}
  for i = first, last do parts[#parts + 1] = flow_pack_id(ids[i]) end
  return table.concat(parts)
end

-- A state's lease value: { holders, waiting } or, while a time is kept, { holders, waiting,
-- tat, hold }. One holder of at most 13 ids with fewer than 128 waiting (every uncontended
-- key) is written by hand: [[ [token, lease end, ids...] ], waiting].
local function flow_pack_state(state, timed)
  local holder = state.holders[1]
  if timed or #state.holders ~= 1 or #holder > 15 or state.waiting > 127 then
    return cmsgpack.pack(timed and { state.holders, state.waiting, state.tat, state.hold } or { state.holders, state.waiting })
  end
  local ids = #holder >= 3 and flow_pack_ids(holder, 3, #holder) or ''
  return string.char(0x92, 0x91, 0x90 + #holder) .. flow_pack_once(holder[1]) .. flow_pack_once(holder[2]) .. ids .. string.char(state.waiting)
end

-- Writes keys' states back in a few calls, not one per key: `states` maps each key to its
-- state (or to its lease value, packed already); a key nothing holds or waits on loses its field,
-- as does every key of `gone` (optional: keys known free already, not in `keys`).
local FLOW_WRITE_CHUNK = 500
local function flow_store_all(lease_key, keys, states, gone)
  local kept = { FLOW_ENCODING_FIELD, FLOW_ENCODING_VALUE }
  gone = gone or {}
  for _, key in ipairs(keys) do
    local state = states[key]
    if type(state) == 'string' then
      kept[#kept + 1] = key
      kept[#kept + 1] = state
    else
      if state.waiting < 0 then state.waiting = 0 end
      local timed = state.tat > state.now or state.hold > state.now
      if #state.holders == 0 and state.waiting == 0 and not timed then
        gone[#gone + 1] = key
      else
        kept[#kept + 1] = key
        kept[#kept + 1] = flow_pack_state(state, timed)
      end
    end
  end
  for first = 1, #gone, FLOW_WRITE_CHUNK do
    redis.call('HDEL', lease_key, unpack(gone, first, math.min(first + FLOW_WRITE_CHUNK - 1, #gone)))
  end
  if #kept == 2 then
    if #gone > 0 and redis.call('HLEN', lease_key) == 1 then redis.call('HDEL', lease_key, FLOW_ENCODING_FIELD) end
    return
  end
  for first = 1, #kept, 2 * FLOW_WRITE_CHUNK do
    redis.call('HSET', lease_key, unpack(kept, first, math.min(first + 2 * FLOW_WRITE_CHUNK - 1, #kept)))
  end
end

-- The ready queue's reply to `command`; a key of another type (the unordered set of earlier
-- versions) is dropped and reads as empty: its keys' entries come back when their not-before
-- passes.
local function flow_ready_read(ready_key, ...)
  local reply = redis.pcall('ZRANGE', ready_key, ...)
  if reply.err then
    redis.call('DEL', ready_key)
    return {}
  end
  return reply
end

-- Puts `keys` at the back of the ready queue, in this order; a key already in it keeps its
-- place (ZADD NX). Scores count up from the current last one. Returns how many were added.
local function flow_ready_add(ready_key, keys)
  if #keys == 0 then return 0 end
  local last = flow_ready_read(ready_key, -1, -1, 'WITHSCORES')[2]
  local score, added = (tonumber(last) or 0) + 1, 0
  for first = 1, #keys, FLOW_WRITE_CHUNK do
    local add = { 'ZADD', ready_key, 'NX' }
    for i = first, math.min(first + FLOW_WRITE_CHUNK - 1, #keys) do
      add[#add + 1] = score
      add[#add + 1] = keys[i]
      score = score + 1
    end
    added = added + redis.call(unpack(add))
  end
  return added
end

-- Writes one key's state back (flow_store_all for one key).
local function flow_store(lease_key, key, state)
  flow_store_all(lease_key, { key }, { [key] = state })
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
