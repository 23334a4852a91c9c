--[[
  settle.lua: apply one round's verdicts in a single round trip.

  Acks first, in one XACK per chunk: those handlers have committed, and no later
  dead-letter failure should keep them pending.

  Then each dead-letter, in this order, which is the safety argument itself:
    1. marker absent?  -> XADD the DLT record (evidence)
    2.                 -> SET the marker (EX ttl)
    3. XACK the source entry
  Lua does not roll back writes already made. If the XADD fails, the script aborts before
  the marker and the ack: the entry stays pending and is retried. If a later step fails,
  a replay finds the marker, skips the DLT write and only acks. Writing the marker first
  would let a failed XADD be followed by an ack with no evidence anywhere.

  The DLT record copies every original field as orig_<name>, read here with XRANGE so the
  bytes are exact and never round-trip through the client. An entry too wide to copy field
  by field (more than 3,900 fields: the record's XADD goes through unpack(), which Lua caps
  near 8,000 values) still leaves its evidence whole: its flat field/value array, packed
  with cmsgpack into the single field packed_original (no orig_ fields then). Packing takes
  the table itself, never unpack(), so no width is too large. The name sits outside the
  orig_ namespace on purpose: an original field called "packed" is recorded as orig_packed,
  and must never be mistaken for a packed entry. redrive.lua restores either form exactly.

  Deferrals with a delay (SPEC §5.6): each retained entry whose handler asked for one gets a
  not-before time in the group's deferral hash, the Redis clock now plus the delay, which
  claim.lua honours (an entry is due only once that time has come, besides its backoff). Only
  an entry still pending gets one: a replayed settle never leaves a record behind for an
  entry acked meanwhile. The record goes when claim.lua takes the entry after its time, when
  the entry is found deleted, and here when it is acked or dead-lettered (acked ids are
  cleared only while the hash exists: one EXISTS, most settles have nothing to clear). A
  crash before this script leaves no record: the entry comes back after its backoff, sooner
  than asked — a retry, never a loss.

  Flow leases (SPEC §5.7, lib/flow-lease.lua), when the round returns any: each key's entries
  leave this run's holder (a holder left with none goes, freeing its slot); under strict order
  the ones the caller names to queue (retained, or never started) that are still pending become
  heads of the key's queue, so no later entry of the key overtakes them; and a key with a free
  slot and waiting entries goes to the back of the ready queue, which the next claim serves
  first. This runs last, after the dead-letters: a dead-letter whose record fails aborts the
  script with its entry still pending and still under the run's holder, so its key is never
  reopened beneath it (the caller never names an acked or dead-lettered entry to queue; after
  their acks they are not pending anyway). A run whose holder is gone — its lease ran out and
  the key moved on (under strict order, after its pending entries were queued) — changes nothing
  of the key: it counts lease_lost, and its verdicts still apply (an ack is of committed work).
  Replayed, removing ids already gone and queueing what is queued do nothing (a replay may count
  lease_lost once more).

  KEYS[1]     source stream
  KEYS[2]     dead-letter stream
  KEYS[3]     deferral hash of the group: entry id -> not-before, Redis ms
  KEYS[4]     flow leases of the group (read only when flow leases are returned)
  KEYS[5]     the group's ready flow keys (a sorted set, first ready first served)
  KEYS[6]     the group's per-key flow queues (a sorted set)
  KEYS[7..]   one marker key per dead-letter, in ARGV order: <prefix><group>:<source entry id>
              (per group and entry, SPEC §3.4: a marker never hides another group's verdict
              or another entry that reuses an event id)
  ARGV[1]     group
  ARGV[2]     marker TTL, seconds
  ARGV[3]     n = number of ack ids, followed by the n ids
  then        m = number of deferrals, followed by m pairs: entry id, delay (ms)
  then        f = number of flow sections (each key returned is in one); when f > 0: the run's
              token, the limit, '1' for strict order (else '0'), '1' when a deferral holds its
              key (a per-key rate limit: no entry of the key starts before the deferral's
              not-before), then the f sections, each one of three forms:
                the key, n > 0, the n entry ids leaving the run's holder, q, and the q of them
                to queue as heads (strict order only);
                the key, -m: the next m ids of the ack list (taken in order from its start,
                section after section) leave the holder, none to queue;
                '' (never a flow key), r, then r keys, at most one such section: each key's
                one id is the next id of the ack list — the common case (one acked entry per
                key), checked in one pass (flow_frees_one); a key whose value is anything but
                this run's holder of that id alone is returned as a section of its own would be;
                or the same as '', 0, r and one argument holding the r keys, each ended by
                '\n' (keys without that byte: the caller's client pays per argument)
  then, per dead-letter, 4 values: source entry id, event_id ('' if none), reason, deliveries

  Reply: { acked, dead_lettered, marker_hits, deferred, lease_lost, ready }
    acked          entries XACK reported as acknowledged (verdict ack)
    dead_lettered  DLT records written
    marker_hits    dead-letters whose marker already existed (replay: acked, no second record)
    deferred       deferral records written
    lease_lost     flow keys whose holder of this run was gone
    ready          flow keys this settle made ready (a slot freed while entries waited)
]]
-- #include lib/flow-lease.lua
local stream, dlt, defer_key, lease_key, ready_key, queue_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local group, marker_ttl = ARGV[1], ARGV[2]
local ack_count = tonumber(ARGV[3])

-- unpack() is bounded by the Lua C stack (about 8000 values); chunk large ack lists and
-- never copy more original values than fit beside the record's own fields.
local ACK_CHUNK = 1000
local MAX_ORIGINAL_VALUES = 7800
local PACKED_FIELD = 'packed_original'
local last_ack = 3 + ack_count

-- The flow section's layout, read before anything is written (a malformed one is refused with
-- nothing acked); it is applied after the dead-letters (see the header).
local flow_at = last_ack + 3 + 2 * tonumber(ARGV[last_ack + 1])
local flow_sections_sent = tonumber(ARGV[flow_at - 1])
local flow_key_names, flow_sections = {}, {}
-- The one-id keys and where their ids start in the ack list.
local one_keys, one_acked = nil, 0
local flow_end = flow_at
if flow_sections_sent > 0 then
  local at = flow_at + 4
  -- Where the next section of acked ids starts in the ack list (ARGV[4..last_ack]).
  local acked_at = 4
  -- Each key's section: its ids leaving the holder, then those to queue (ARGV index ranges).
  local k = 0
  for _ = 1, flow_sections_sent do
    local key, n = ARGV[at], tonumber(ARGV[at + 1])
    if key == '' then
      local packed = n == 0
      if packed then n = tonumber(ARGV[at + 2]) end
      -- The section's last argument: the packed list, or the last of the n keys.
      local last_arg = packed and at + 3 or at + 1 + (n or 0)
      if one_keys or not n or n < 1 or acked_at + n - 1 > last_ack or last_arg > #ARGV then
        return redis.error_reply('ERR settle: a malformed section of one-id flow keys')
      end
      one_keys, one_acked = {}, acked_at
      -- Every key is named ('' is never a flow key), and a packed list ends with its last key's '\n'.
      local well_formed = true
      if packed then
        local list = ARGV[at + 3]
        well_formed = string.byte(list, -1) == 10
        for one in string.gmatch(list, '([^\n]*)\n') do
          one_keys[#one_keys + 1] = one
          if one == '' then well_formed = false end
        end
        at = at + 4
      else
        for j = 1, n do
          one_keys[j] = ARGV[at + 1 + j]
          if one_keys[j] == '' then well_formed = false end
        end
        at = at + 2 + n
      end
      if not well_formed or #one_keys ~= n then return redis.error_reply('ERR settle: a malformed section of one-id flow keys') end
      acked_at = acked_at + n
    else
      -- Flat, four per key (a table per key was garbage the script's GC steps paid for).
      k = k + 1
      flow_key_names[k] = key
      if n < 0 then
        if acked_at - n - 1 > last_ack then return redis.error_reply('ERR settle: a flow section takes more acked ids than the ack list holds') end
        flow_sections[4 * k - 3], flow_sections[4 * k - 2], flow_sections[4 * k - 1], flow_sections[4 * k] = acked_at, acked_at - n - 1, 1, 0
        acked_at = acked_at - n
        at = at + 2
      else
        local q = tonumber(ARGV[at + 2 + n])
        flow_sections[4 * k - 3], flow_sections[4 * k - 2], flow_sections[4 * k - 1], flow_sections[4 * k] = at + 2, at + 1 + n, at + 3 + n, at + 2 + n + q
        at = at + 3 + n + q
      end
    end
  end
  flow_end = at
end

local acked = 0
local i = 4
while i <= last_ack do
  local stop = math.min(i + ACK_CHUNK - 1, last_ack)
  acked = acked + redis.call('XACK', stream, group, unpack(ARGV, i, stop))
  i = stop + 1
end
-- Settled entries lose their deferral records. claim.lua already removes a record when it
-- takes the entry, so this is a safeguard that costs one EXISTS when there is nothing to clear.
local has_deferrals = redis.call('EXISTS', defer_key) == 1
if has_deferrals and ack_count > 0 then
  for first = 4, last_ack, ACK_CHUNK do
    redis.call('HDEL', defer_key, unpack(ARGV, first, math.min(first + ACK_CHUNK - 1, last_ack)))
  end
end

-- The server clock, read only for a round that writes a DLT record or a deferral: most rounds
-- only ack, and TIME on every settle was a command call each for nothing.
local now_ms
local function server_now_ms()
  if not now_ms then
    local now = redis.call('TIME')
    now_ms = string.format('%d', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
  end
  return now_ms
end

local deferrals = tonumber(ARGV[i])
local deferred, delay_of = 0, {}
i = i + 1
for _ = 1, deferrals do
  local entry_id, delay = ARGV[i], tonumber(ARGV[i + 1])
  delay_of[entry_id] = delay
  if redis.call('XPENDING', stream, group, entry_id, entry_id, 1)[1] then
    -- A Redis over maxmemory refuses this HSET when the script has written nothing yet (OOM):
    -- the entry then stays pending without its not-before, redelivered on its backoff instead.
    local written_at = redis.pcall('HSET', defer_key, entry_id, string.format('%d', tonumber(server_now_ms()) + delay))
    if type(written_at) == 'table' and written_at.err then
      if string.find(written_at.err, 'OOM', 1, true) ~= 1 then error(written_at) end
    else
      deferred = deferred + 1
    end
  end
  i = i + 2
end

-- Past the flow section (read before any write, above): the dead-letters.
i = flow_end

local written, hits = 0, 0
local k = 7
while i <= #ARGV do
  local entry_id, event_id, reason, deliveries = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local marker = KEYS[k]
  if redis.call('EXISTS', marker) == 0 then
    local record = {
      'event_id', event_id, 'reason', reason, 'source_stream', stream,
      'source_entry_id', entry_id, 'group', group, 'deliveries', deliveries,
      'dead_lettered_at', server_now_ms(),
    }
    local original = redis.call('XRANGE', stream, entry_id, entry_id)
    if original[1] then
      local fields = original[1][2]
      if #fields <= MAX_ORIGINAL_VALUES then
        for f = 1, #fields, 2 do
          record[#record + 1] = 'orig_' .. fields[f]
          record[#record + 1] = fields[f + 1]
        end
      else
        -- unpack() below cannot carry this many values; one packed value can.
        record[#record + 1] = PACKED_FIELD
        record[#record + 1] = cmsgpack.pack(fields)
      end
    end
    redis.call('XADD', dlt, '*', unpack(record))
    redis.call('SET', marker, entry_id, 'EX', marker_ttl)
    written = written + 1
  else
    hits = hits + 1
  end
  redis.call('XACK', stream, group, entry_id)
  if has_deferrals then redis.call('HDEL', defer_key, entry_id) end
  i = i + 4
  k = k + 1
end

-- True when `value` says this run is the key's only holder, holding exactly the ids
-- ARGV[first..last] in that order, with nothing waiting and no time kept: then returning them
-- frees the field, and the bytes say so without unpacking them (most returns, by far). The
-- bytes compared: [[holder], 0] where holder = [token, lease end, ids...]; the lease end is one
-- 9-byte msgpack number (a Redis ms time, past 2^32), which is not compared. Up to 13 ids
-- keep the holder a fixarray (2 + 13 = 15 elements).
-- The comparisons find rather than cut substrings: a substring is one more string to intern.
local FLOW_FAST_IDS = 13
local flow_fast_heads = {}
local function flow_returns_all(value, packed_token, first, last)
  local n = last - first + 1
  if not value or n < 1 or n > FLOW_FAST_IDS then return false end
  local head = flow_fast_heads[n]
  if head == nil then
    head = string.char(0x92, 0x91, 0x92 + n) .. packed_token
    flow_fast_heads[n] = head
  end
  local tail = flow_pack_ids(ARGV, first, last) .. '\0'
  if #value ~= #head + 9 + #tail then return false end
  local ends = string.byte(value, #head + 1)
  return (ends == 0xcf or ends == 0xcb) and string.find(value, head, 1, true) == 1 and string.find(value, tail, #value - #tail + 1, true) ~= nil
end

-- True when `value` says this run is the key's only holder, holding only `id`, with nothing
-- waiting and no time kept: [[ [token, lease end, id] ], 0], where `head` is the bytes up to the
-- lease end (one 9-byte msgpack number, not compared) and the id is a fixstr. Then returning
-- the id frees the field. The id is compared as a substring of the value: Lua finds it
-- interned already (it is an argument), so nothing new is allocated.
local function flow_frees_one(value, head, id)
  local n, h = #id, #head
  if not value or n >= 32 or #value ~= h + 11 + n then return false end
  local ends, tag, waiting = string.byte(value, h + 1), string.byte(value, h + 10), string.byte(value, -1)
  return (ends == 0xcf or ends == 0xcb) and tag == 0xa0 + n and waiting == 0 and string.sub(value, 1, h) == head and string.sub(value, h + 11, -2) == id
end

-- A deferral among ARGV[first..last] that holds its key (a per-key rate limit's hold).
local function flow_holds(hold, first, last)
  if not hold then return false end
  for j = first, last do
    if delay_of[ARGV[j]] then return true end
  end
  return false
end

-- Flow leases, last: a dead-letter whose record fails aborts the script before this, so its
-- entry stays pending under the run's holder (its key is not reopened beneath it).
local lease_lost, ready = 0, 0
if flow_sections_sent > 0 then
  local token, limit, strict, hold = ARGV[flow_at], tonumber(ARGV[flow_at + 1]), ARGV[flow_at + 2] == '1', ARGV[flow_at + 3] == '1'
  local now = tonumber(server_now_ms())
  local packed_token = cmsgpack.pack(token)
  local keys = flow_key_names
  local values, states, touched, gone = {}, {}, {}, {}
  -- The one-id keys: a key whose value is exactly this run's holder of that id goes (most
  -- keys); any other is returned like a key of its own section below.
  local one_head = string.char(0x92, 0x91, 0x93) .. packed_token
  local one_count = one_keys and #one_keys or 0
  for first = 1, one_count, FLOW_WRITE_CHUNK do
    local last = math.min(first + FLOW_WRITE_CHUNK - 1, one_count)
    local chunk = redis.call('HMGET', lease_key, unpack(one_keys, first, last))
    for j = first, last do
      local key, id_at = one_keys[j], one_acked + j - 1
      if flow_frees_one(chunk[j - first + 1], one_head, ARGV[id_at]) then
        gone[#gone + 1] = key
      else
        local k = #keys + 1
        keys[k] = key
        flow_sections[4 * k - 3], flow_sections[4 * k - 2], flow_sections[4 * k - 1], flow_sections[4 * k] = id_at, id_at, 1, 0
      end
    end
  end
  for first = 1, #keys, FLOW_WRITE_CHUNK do
    local chunk = redis.call('HMGET', lease_key, unpack(keys, first, math.min(first + FLOW_WRITE_CHUNK - 1, #keys)))
    if first == 1 then values = chunk else for j, value in ipairs(chunk) do values[first + j - 1] = value end end
  end
  -- The state of every key freed by its bytes: one table, never changed (flow_store_all drops its field).
  local freed = { holders = {}, waiting = 0, tat = 0, hold = 0, now = now }
  -- One key's state after the return, or nil when nothing of it changed: the fast path when
  -- the bytes allow it, else decoded, the ids dropped from this run's holder (a holder left
  -- with none goes), the ids to queue made heads, and the key made ready if its slot is free
  -- while entries wait.
  local function returned_state(value, key, first_id, last_id, first_queued, last_queued)
    if last_queued < first_queued and not flow_holds(hold, first_id, last_id) and flow_returns_all(value, packed_token, first_id, last_id) then
      return freed
    end
    local state = flow_open(value, now, token, strict, stream, group, queue_key, key)
    local mine = flow_holder_of(state.holders, token)
    if mine == nil then
      lease_lost = lease_lost + 1
      if not state.changed then return nil end
    else
      local holder = state.holders[mine]
      for j = first_id, last_id do
        flow_drop_id(holder, 3, ARGV[j])
        -- A deferred entry holds its key until its not-before: the downstream asked for that wait.
        local delay = hold and delay_of[ARGV[j]]
        if delay and now + delay > state.hold then state.hold = now + delay end
      end
      flow_leave_if_empty(state, token)
      for j = first_queued, last_queued do
        local id = ARGV[j]
        if redis.call('XPENDING', stream, group, id, id, 1)[1] then state.waiting = state.waiting + flow_enqueue(queue_key, key, id, 'h') end
      end
    end
    if #state.holders < limit and state.waiting > 0 then ready = ready + flow_ready_add(ready_key, { key }) end
    return state
  end
  for k, key in ipairs(keys) do
    local state = not states[key] and returned_state(values[k], key, unpack(flow_sections, 4 * k - 3, 4 * k))
    if state then
      states[key] = state
      touched[#touched + 1] = key
    end
  end
  flow_store_all(lease_key, touched, states, gone)
end

return { acked, written, hits, deferred, lease_lost, ready }
