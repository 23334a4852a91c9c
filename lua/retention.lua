--[[
  retention.lua: one retention pass over a stream in one call (SPEC §7; SPEC §10: an idle
  trim costs one billed command per stream). Four parts, each run only when asked, each
  keeping its own guarantee; they touch disjoint state and none reads what another writes
  (the trim removes entries, the DLT part DLT records, the reaper consumers with nothing
  pending), so running them together in one atomic call changes none of them. A part that
  fails (a key of the wrong type) does not stop the others: its error is returned in its
  slot, and what the others did stands.

  0. Scheduled events (SPEC §5.6): the due ones are moved into the stream first
     (lib/schedule-move.lua: never early by the Redis clock, each at most once, never lost),
     so a stream nobody polls still gets its due events appended — once a group reads it:
     into a stream without a group nothing is moved (a group created later from '$' would
     start past the event and never see it). It runs before the trim,
     and what it appends lies after every group's last-delivered id, so the trim's frontier
     never reaches it.

  1. Safe trim: delete only what every consumer group is done with.
     For each group the frontier is the smaller of its last-delivered id (every entry after
     it is still unread by that group) and its smallest pending id (delivered, not yet
     acked). The stream frontier is the smallest group frontier, and XTRIM MINID keeps every
     entry whose id is >= MINID — so trimming at exactly the frontier removes only entries
     that every group has both read and acknowledged. Evidence and deletion share the
     script: no group can be created, and no entry read or acked, in between; a group
     created after it simply sees the trimmed stream.
     Fail closed: no groups, or any group whose name, last-delivered id or PEL summary
     cannot be read or parsed, means nothing is deleted. Never fall back to last-delivered
     when the PEL is non-empty but its smallest id is unreadable. Ids are compared as
     decimal strings, not Lua numbers: a 64-bit sequence number does not survive a double.
     Bounded work (limit > 0): when the stream holds more than `limit` entries the trim is
     XTRIM MINID ~ <frontier> LIMIT <limit>: Redis then frees only whole macro nodes whose
     every id is below the frontier, at most `limit` entries per call, so it never removes
     an id at or above the frontier either, and later runs continue. A stream of at most
     `limit` entries, or any stream with limit 0, is trimmed exactly.
     The size and flow key records claim.lua checks follow what was removed: records below
     the frontier are dropped (only unread entries need theirs, and every group has read
     everything below it), and the counts 'large', 'trimmed' and 'keyed_trimmed' follow;
     'recorded_from' rises to the frontier, so a group created later behind it (whose
     entries below it may have lost their records) is read through Lua (claim.lua).

  2. DLT retention: drop dead-letter records older than the window. A record's id is given
     by XADD '*' when it is written, so its millisecond part is the dead-lettering time on
     the Redis clock; the cut-off comes from Redis TIME, not the caller's clock, so a skewed
     function clock can never delete younger evidence. XTRIM MINID keeps every record
     written within the window.

  3. Consumer reaper: delete consumers that hold nothing and have been inactive too long.
     XGROUP DELCONSUMER discards the consumer's pending entries, so "zero pending" and the
     delete are one atomic step here: no read can hand the consumer an entry in between. A
     consumer with pending entries is never deleted, however long inactive (its entries
     are the reclaim path's; counted as busy_idle). Deleting an empty consumer loses
     nothing: the next read or claim under that name creates it again.
     Inactive means the same on every server: the time since the consumer last got
     something (an entry read or claimed). Valkey (and Redis >= 7.2) report it as
     `inactive`, and there `idle` is reset by any attempt, an empty XREADGROUP included —
     a consumer polling an idle stream would never look idle. Redis 7.0 has no `inactive`,
     and its `idle` already is that time (an empty read or claim neither resets it nor
     creates the consumer). So: `inactive` when the reply has it, else `idle`. A consumer
     that never got anything has `inactive` -1 (Valkey creates consumers on empty reads):
     then its `idle`, the time since its last attempt — a per-run consumer that found
     nothing is reaped a threshold after its run.

  KEYS[1]  source stream
  KEYS[2]  its large-entry records (append.lua)     } trim only; another part's caller
  KEYS[3]  its sizes hash                           } passes any key of the slot
  KEYS[4]  its dead-letter stream                     (DLT part only)
  KEYS[5]  its schedule's due-time sorted set        } move only (src/schedule/keys.ts);
  KEYS[6]  its schedule's packed entries hash        } the move also writes KEYS[2], KEYS[3]
  ARGV[1]  trim limit: '' = no trim; 0 = exact, unbounded; n > 0 = see 1.
  ARGV[2]  DLT retention window, seconds: '' = no DLT part
  ARGV[3]  reaper threshold, ms (only consumers inactive strictly longer): '' = no reaper
  ARGV[4]  reaper: at most this many deletions per call
  ARGV[5]  most scheduled events moved: '' = no move
  ARGV[6..] reaper: group names to reap; none = every group on the stream

  Reply: { trim, dlt, reap, move }, each {} when not asked, or its error as { 'error', message }:
    trim  { removed, frontier, status, mode }
          removed  entries XTRIM deleted (0 unless status is 'trimmed')
          frontier the MINID used ('' when nothing was attempted)
          status   'trimmed' | 'no_stream' | 'no_groups' | 'bad_evidence'
          mode     'exact' | 'approximate' ('' when nothing was attempted)
    dlt   { removed, cutoff_ms }: records dead-lettered before cutoff_ms (Redis clock) were
          eligible ('0' when the window reaches before the epoch)
    reap  { deleted, busy_idle }: deleted is { group, consumer, group, consumer, ... }
    move  { moved, next_due, dropped } (lib/schedule-move.lua; next_due -1 when none)
]]
-- #include lib/schedule-move.lua
local stream = KEYS[1]

local function field(flat, name)
  for i = 1, #flat - 1, 2 do
    if flat[i] == name then return flat[i + 1] end
  end
  return nil
end

-- ---- 1. safe trim

-- Splits 'ms-seq' into two digit strings without leading zeros; nil when malformed.
local function parse_id(raw)
  if type(raw) ~= 'string' then return nil end
  local ms, seq = string.match(raw, '^(%d+)-(%d+)$')
  if ms == nil then return nil end
  return { (string.gsub(ms, '^0+(%d)', '%1')), (string.gsub(seq, '^0+(%d)', '%1')), raw }
end

-- Numeric order of two digit strings without leading zeros.
local function digits_less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

local function id_less(a, b)
  if a[1] ~= b[1] then return digits_less(a[1], b[1]) end
  return digits_less(a[2], b[2])
end

local function safe_trim(limit)
  if redis.call('EXISTS', stream) == 0 then return { 0, '', 'no_stream', '' } end

  local groups = redis.call('XINFO', 'GROUPS', stream)
  if type(groups) ~= 'table' or #groups == 0 then return { 0, '', 'no_groups', '' } end

  local frontier = nil
  for _, info in ipairs(groups) do
    if type(info) ~= 'table' then return { 0, '', 'bad_evidence', '' } end
    local name = field(info, 'name')
    local candidate = parse_id(field(info, 'last-delivered-id'))
    if type(name) ~= 'string' or candidate == nil then return { 0, '', 'bad_evidence', '' } end

    local summary = redis.call('XPENDING', stream, name)
    if type(summary) ~= 'table' or type(summary[1]) ~= 'number' then return { 0, '', 'bad_evidence', '' } end
    if summary[1] > 0 then
      local smallest = parse_id(summary[2])
      if smallest == nil then return { 0, '', 'bad_evidence', '' } end
      if id_less(smallest, candidate) then candidate = smallest end
    end

    if frontier == nil or id_less(candidate, frontier) then frontier = candidate end
  end

  -- The size records and counts claim.lua checks follow what this trim removes.
  local function account(removed)
    local padded = string.rep('0', 20 - #frontier[1]) .. frontier[1] .. '-' .. string.rep('0', 20 - #frontier[2]) .. frontier[2]
    local dropped = redis.call('ZREMRANGEBYLEX', KEYS[2], '-', '(' .. padded)
    if dropped > 0 then redis.call('HINCRBY', KEYS[3], 'large', -dropped) end
    -- Flow key records ('k' .. padded id .. ' ' .. id .. ' ' .. key, lib/record-size.lua) below it too.
    local dropped_keys = redis.call('ZREMRANGEBYLEX', KEYS[2], '[k', '(k' .. padded)
    if dropped_keys > 0 then redis.call('HINCRBY', KEYS[3], 'keyed_trimmed', dropped_keys) end
    -- A group created later behind the frontier would read entries without their records:
    -- claim.lua reads through Lua for a group behind 'recorded_from' (a padded id).
    local recorded_from = redis.call('HGET', KEYS[3], 'recorded_from')
    if not recorded_from or recorded_from < padded then redis.call('HSET', KEYS[3], 'recorded_from', padded) end
    if removed > 0 then redis.call('HINCRBY', KEYS[3], 'trimmed', removed) end
  end

  if limit > 0 and redis.call('XLEN', stream) > limit then
    local removed = redis.call('XTRIM', stream, 'MINID', '~', frontier[3], 'LIMIT', limit)
    account(removed)
    return { removed, frontier[3], 'trimmed', 'approximate' }
  end
  local removed = redis.call('XTRIM', stream, 'MINID', frontier[3])
  account(removed)
  return { removed, frontier[3], 'trimmed', 'exact' }
end

-- ---- 2. DLT retention

local function trim_dead_letters(window_seconds)
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local cutoff = now_ms - window_seconds * 1000
  if cutoff <= 0 then return { 0, '0' } end
  local cutoff_text = string.format('%d', cutoff)
  local removed = redis.call('XTRIM', KEYS[4], 'MINID', cutoff_text .. '-0')
  return { removed, cutoff_text }
end

-- ---- 3. consumer reaper

-- Time since the consumer last got something (see the header); nil when unreadable.
local function inactive_ms(info)
  local inactive = field(info, 'inactive')
  if type(inactive) == 'number' and inactive >= 0 then return inactive end
  local idle = field(info, 'idle')
  if type(idle) == 'number' then return idle end
  return nil
end

local function reap(threshold, limit, asked)
  if redis.call('EXISTS', stream) == 0 then return { {}, 0 } end

  -- Every group on the stream, or the asked ones that exist (a missing group holds nothing).
  local existing, groups = {}, {}
  for _, info in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local name = field(info, 'name')
    if type(name) == 'string' then
      existing[name] = true
      if #asked == 0 then groups[#groups + 1] = name end
    end
  end
  for _, name in ipairs(asked) do
    if existing[name] then groups[#groups + 1] = name end
  end

  local deleted, busy_idle, count = {}, 0, 0
  for _, group in ipairs(groups) do
    for _, info in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
      local name, pending, quiet = field(info, 'name'), field(info, 'pending'), inactive_ms(info)
      -- Anything unreadable counts as "not provably empty and inactive": keep it.
      if type(name) == 'string' and type(pending) == 'number' and quiet ~= nil and quiet > threshold then
        if pending ~= 0 then
          busy_idle = busy_idle + 1
        elseif count < limit then
          redis.call('XGROUP', 'DELCONSUMER', stream, group, name)
          deleted[#deleted + 1] = group
          deleted[#deleted + 1] = name
          count = count + 1
        end
      end
    end
  end
  return { deleted, busy_idle }
end

-- ---- the pass: each part asked for, in its own protected call

local function part(run, ...)
  local ok, result = pcall(run, ...)
  if ok then return result end
  local message = type(result) == 'table' and (result.err or result.message) or tostring(result)
  return { 'error', message }
end

-- The move's byte bound per pass (lib/schedule-move.lua): a large due backlog over several passes.
local MOVE_MAX_BYTES = 4 * 1024 * 1024
local move_result, trim_result, dlt_result, reap_result = {}, {}, {}, {}
-- Only into a stream some group reads, as a claim moves: a group created later from '$' would
-- start past a moved event and never see it (lib/schedule-move.lua).
local function has_groups()
  local groups = redis.pcall('XINFO', 'GROUPS', stream)
  return type(groups) == 'table' and groups.err == nil and #groups > 0
end
if ARGV[5] ~= '' then
  move_result = part(function(max_moved)
    if not has_groups() then return { 0, schedule_head(KEYS[5]), 0 } end
    return { move_due_events(stream, KEYS[5], KEYS[6], KEYS[3], KEYS[2], max_moved, MOVE_MAX_BYTES) }
  end, tonumber(ARGV[5]))
end
if ARGV[1] ~= '' then trim_result = part(safe_trim, tonumber(ARGV[1])) end
if ARGV[2] ~= '' then dlt_result = part(trim_dead_letters, tonumber(ARGV[2])) end
if ARGV[3] ~= '' then
  local asked = {}
  for i = 6, #ARGV do asked[#asked + 1] = ARGV[i] end
  reap_result = part(reap, tonumber(ARGV[3]), tonumber(ARGV[4]), asked)
end
return { trim_result, dlt_result, reap_result, move_result }
