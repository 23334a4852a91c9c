--[[
  claim.lua: one claim of a run, inside the byte budget (SPEC §5.1 "Claim", "Byte budget").
  It reclaims idle pending entries from the shared cursor and decides how the fresh entries
  are read, so that the reply (and the fresh read beside it) never carries more than the
  byte allowance the run still has.

  Reclaim. XAUTOCLAIM from the cursor stored in Redis: a poll function keeps no memory
  between runs, and restarting at 0-0 every run would let a first page of entries that are
  always retained starve every entry behind it; 0-0 as the next cursor means a full pass
  finished. A stored cursor this script cannot use restarts the pass at 0-0 instead of
  failing every round from then on (a permanent outage of the consumer): not an entry id
  (lost, written by hand) or one XAUTOCLAIM rejects (a 64-bit overflow) — the pass restarts
  and the next cursor is stored over it (note 'reset'); a key of another type — every pass
  starts at 0-0 and the key is left alone, since an explicit keys.cursor can name a key this
  library did not write (note 'wrong_type'). An error with cursor 0-0 is not the cursor's
  fault (NOGROUP, a stream of the wrong type): it is returned and nothing is written.
  Reclaimed entries pass through Lua anyway, so their sizes are measured here: the entries
  that do not fit the allowance are put back at once (idle minIdle, delivery count as before
  this claim: reclaimable by any run straight away) and the cursor is stored at the first of
  them, so the next reclaim starts there and nothing is skipped.

  Fresh read, three ways (ARGV[8]):
    'none'    no fresh entries this claim.
    'lua'     XREADGROUP here, measured; the entries past the allowance are handed back to
              the stream in the same script (XACK removes them from this group's PEL,
              XGROUP SETID moves the group's last-delivered id back before them), so the next
              read delivers them again, in order, as if never read. Costs copying the
              entries through Lua; REST clients (one script per claim) and a run's first
              claim read this way.
    'native'  the caller sends, right after this script inside one MULTI/EXEC,
              XREADGROUP … COUNT ARGV[7] STREAMS <stream> <gate> > >, which copies nothing
              through Lua. This script proves first that those entries fit: every entry of
              the stream was appended by a writer that records sizes (append.lua, publish.lua,
              redrive.lua: KEYS[3] counts their appends, KEYS[4] holds every entry larger
              than SMALL with its size), so the entries the read will deliver — the first
              min(count, lag) after this group's last-delivered id, nothing can interleave in
              a MULTI — weigh at most the sizes of the first large ones after it plus SMALL
              for each other. Proven: the gate (a consumer group named like this group on the
              empty stream KEYS[5]) is opened and the read goes ahead. Not proven (a writer
              that records nothing appended, the lag is unknown, or the entries do not fit):
              the entries are read here as in 'lua', and the gate is closed, so the read
              beside fails with NOGROUP on the gate and delivers nothing.
  A stream some writer appended to without recording sizes is proven again once every
  group has read everything (all lags 0): nothing unread is then of unknown size.

  KEYS[1]  source stream
  KEYS[2]  cursor key (string; absent = 0-0)
  KEYS[3]  sizes hash: field 'appended' = entries appended by recording writers
  KEYS[4]  large entries: sorted set, score = the entry's ordinal among the recorded appends,
           member = '<ordinal> <bytes>'
  KEYS[5]  gate stream (empty; one consumer group per reading group)
  ARGV[1]  group
  ARGV[2]  consumer
  ARGV[3]  min idle, ms
  ARGV[4]  max entries to reclaim (0: no reclaim)
  ARGV[5]  byte allowance of this claim (ids, field names and values of what it returns)
  ARGV[6]  '1' when the run holds nothing else: then one entry larger than the allowance may
           be taken alone (SPEC §5.1)
  ARGV[7]  fresh entries asked for
  ARGV[8]  'none' | 'lua' | 'native'

  Reply: { next_cursor, reclaimed, deleted_ids, delivery_counts, cursor_note, fresh_via,
           fresh, cut, bytes }
    next_cursor      the stored cursor ('' when no reclaim ran)
    reclaimed        entries reclaimed: { {id, {field, value, ...}}, ... }
    deleted_ids      pending ids whose entries were deleted (XAUTOCLAIM drops them from the PEL)
    delivery_counts  one integer per reclaimed entry, as counted after this claim
    cursor_note      '' | 'reset' | 'wrong_type'
    fresh_via        'none' | 'lua' (fresh holds them) | 'native' (the read beside delivers them)
    fresh            fresh entries read here (fresh_via 'lua')
    cut              1 when the allowance left entries behind (the reply is short for bytes,
                     not because the stream or the PEL ran out), else 0
    bytes            what this claim counts against the allowance: the measured size of what
                     it returns here, plus the proven bound of a native read beside it
]]
local stream, cursor_key, sizes_key, large_key, gate_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local group, consumer, min_idle = ARGV[1], ARGV[2], ARGV[3]
local reclaim_count = tonumber(ARGV[4])
local allowance = tonumber(ARGV[5])
local alone = ARGV[6] == '1'
local fresh_count = tonumber(ARGV[7])
local fresh_mode = ARGV[8]
-- Entries up to this size are not recorded by writers; anything unrecorded weighs at most this.
local SMALL = 1024

local function is_error(reply)
  return type(reply) == 'table' and reply.err ~= nil
end

local function entry_bytes(entry)
  local bytes = #entry[1]
  local fields = entry[2]
  for i = 1, #fields do bytes = bytes + #fields[i] end
  return bytes
end

-- Bytes taken so far; the first entry may exceed the allowance when the run holds nothing else.
local taken, cut = 0, 0
local function fits(bytes)
  return taken + bytes <= allowance or (alone and taken == 0)
end

-- ---- 1. reclaim
local next_cursor, reclaimed, deleted, counts, note = '', {}, {}, {}, ''
if reclaim_count > 0 then
  local cursor = '0-0'
  local stored = redis.pcall('GET', cursor_key)
  if is_error(stored) then
    note = 'wrong_type'
  elseif stored and string.match(stored, '^%d+%-%d+$') then
    cursor = stored
  elseif stored then
    note = 'reset'
  end
  local function autoclaim(start)
    return redis.pcall('XAUTOCLAIM', stream, group, consumer, min_idle, start, 'COUNT', reclaim_count)
  end
  local claimed = autoclaim(cursor)
  if is_error(claimed) and cursor ~= '0-0' then
    if note == '' then note = 'reset' end
    claimed = autoclaim('0-0')
  end
  if is_error(claimed) then return claimed end
  next_cursor, deleted = claimed[1], claimed[3] or {}
  for _, entry in ipairs(claimed[2]) do
    -- XAUTOCLAIM does not report delivery counts; a point XPENDING per entry does (O(log n)).
    local row = redis.call('XPENDING', stream, group, entry[1], entry[1], 1)
    local count = row[1] and row[1][4] or 0
    local bytes = entry_bytes(entry)
    if cut == 0 and fits(bytes) then
      taken = taken + bytes
      reclaimed[#reclaimed + 1] = entry
      counts[#counts + 1] = count
    else
      if cut == 0 then next_cursor = entry[1] end
      cut = 1
      redis.call('XCLAIM', stream, group, consumer, 0, entry[1], 'IDLE', min_idle, 'RETRYCOUNT', math.max(0, count - 1), 'JUSTID')
    end
  end
  if note ~= 'wrong_type' then redis.call('SET', cursor_key, next_cursor) end
end

-- ---- 2. fresh entries
local function group_info()
  local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', stream)
  if not ok then return nil, nil end
  local mine
  local all_read = true
  for _, flat in ipairs(groups) do
    local info = {}
    for i = 1, #flat - 1, 2 do info[flat[i]] = flat[i + 1] end
    if info['name'] == group then mine = info end
    if info['lag'] ~= 0 then all_read = false end
  end
  return mine, all_read
end

-- Sizes of the recorded large entries with ordinals in (after, after + count]: the next `count` unread.
local function large_within(after, count)
  local sizes = {}
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', large_key, '(' .. after, after + count)) do
    sizes[#sizes + 1] = tonumber(string.match(member, ' (%d+)$'))
  end
  return sizes
end

-- True when the next `count` fresh entries of this group provably fit what is left.
local function native_read_fits(count)
  local mine, all_read = group_info()
  if mine == nil then return false end
  local lag, entries_read = mine['lag'], mine['entries-read']
  if type(lag) ~= 'number' or type(entries_read) ~= 'number' then return false end
  local added = entries_read + lag
  local appended = tonumber(redis.call('HGET', sizes_key, 'appended') or '0')
  if appended ~= added then
    if not all_read then return false end
    -- Nothing is unread by any group: every entry from here on is appended by a writer
    -- that counts, or the count tells.
    redis.call('HSET', sizes_key, 'appended', added)
  end
  local window = math.min(count, lag)
  if window == 0 then return true end
  -- With every append counted, the group's entries-read is the ordinal of its last-delivered
  -- entry: the read will deliver ordinals entries_read + 1 .. entries_read + window.
  local large = large_within(entries_read, window)
  local bytes = (window - #large) * SMALL
  for _, size in ipairs(large) do bytes = bytes + size end
  if taken + bytes <= allowance or (window == 1 and alone and taken == 0) then
    taken = taken + bytes
    return true
  end
  return false
end

-- XREADGROUP here; what does not fit goes back to the stream for this group (see header).
local function read_here(count)
  local before = group_info()
  local read = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count, 'STREAMS', stream, '>')
  if is_error(read) then return read end
  if not read then return {} end
  local got, kept = read[1][2], {}
  for _, entry in ipairs(got) do
    local bytes = entry_bytes(entry)
    if not fits(bytes) then break end
    taken = taken + bytes
    kept[#kept + 1] = entry
  end
  if #kept < #got then
    cut = 1
    -- In chunks: unpack() stops near 8,000 values and a batch may be 10,000.
    for first = #kept + 1, #got, 1000 do
      local back = {}
      for i = first, math.min(first + 999, #got) do back[#back + 1] = got[i][1] end
      redis.call('XACK', stream, group, unpack(back))
    end
    local last = #kept > 0 and kept[#kept][1] or before['last-delivered-id']
    if type(before['entries-read']) == 'number' then
      redis.call('XGROUP', 'SETID', stream, group, last, 'ENTRIESREAD', before['entries-read'] + #kept)
    else
      redis.call('XGROUP', 'SETID', stream, group, last)
    end
  end
  return kept
end

local fresh_via, fresh = 'none', {}
if fresh_mode == 'native' then
  if native_read_fits(fresh_count) then
    local opened = redis.pcall('XGROUP', 'CREATE', gate_key, group, '$', 'MKSTREAM')
    if is_error(opened) and not string.find(opened.err, 'BUSYGROUP', 1, true) then return opened end
    fresh_via = 'native'
  else
    redis.pcall('XGROUP', 'DESTROY', gate_key, group)
    fresh_mode = 'lua'
  end
end
if fresh_mode == 'lua' and fresh_count > 0 then
  fresh = read_here(fresh_count)
  if is_error(fresh) then return fresh end
  fresh_via = 'lua'
end

return { next_cursor, reclaimed, deleted, counts, note, fresh_via, fresh, cut, taken }
