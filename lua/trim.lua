--[[
  trim.lua: delete only what every consumer group is done with (SPEC §7, safe trim).

  For each group on the stream the frontier is the smaller of its last-delivered id (every
  entry after it is still unread by that group) and its smallest pending id (delivered, not
  yet acked). The stream frontier is the smallest group frontier, and XTRIM MINID keeps
  every entry whose id is >= MINID — so trimming at exactly the frontier removes only
  entries that every group has both read and acknowledged.

  Evidence and deletion share one script: no group can be created, and no entry read or
  acked, between computing the frontier and trimming at it. A group created after the
  script simply sees the trimmed stream.

  Fail closed: no groups, or any group whose name, last-delivered id or PEL summary cannot
  be read or parsed, means nothing is deleted. Never fall back to last-delivered when the
  PEL is non-empty but its smallest id is unreadable. Ids are compared as decimal strings,
  not Lua numbers: a 64-bit sequence number does not survive conversion to a double.

  Bounded work on a large backlog (ARGV[1] = limit > 0): one exact XTRIM deletes every entry
  below the frontier in one call, which on a backlog of millions blocks Redis for as long.
  When the stream holds more than `limit` entries the trim is XTRIM MINID ~ <frontier>
  LIMIT <limit> instead: Redis then frees only whole macro nodes whose every id is below the
  frontier, at most `limit` entries per call, so it never removes an id at or above the
  frontier either (SPEC §7) and later runs continue. A stream of at most `limit` entries is
  trimmed exactly: that call is bounded by the stream's length. Without a limit (ARGV[1]
  '0' or absent) the trim is always exact.

  KEYS[1]  source stream
  KEYS[2]  the stream's large-entry records (append.lua, ordered by entry id) and KEYS[3] its
           sizes hash: records below the frontier are dropped (only unread entries need theirs,
           and every group has read everything below it), and the counts claim.lua checks
           ('large', 'trimmed') follow what was removed
  ARGV[1]  limit: most entries one call may remove on a large stream (0 or absent: exact, unbounded)

  Reply: { removed, frontier, status, mode }
    removed   entries XTRIM deleted (0 unless status is 'trimmed')
    frontier  the MINID used ('' when nothing was attempted)
    status    'trimmed' | 'no_stream' | 'no_groups' | 'bad_evidence'
    mode      'exact' | 'approximate' ('' when nothing was attempted)
]]
local stream = KEYS[1]
local limit = tonumber(ARGV[1] or '0') or 0

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

local function field(flat, name)
  for i = 1, #flat - 1, 2 do
    if flat[i] == name then return flat[i + 1] end
  end
  return nil
end

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
  if not KEYS[3] then return end
  local padded = string.rep('0', 20 - #frontier[1]) .. frontier[1] .. '-' .. string.rep('0', 20 - #frontier[2]) .. frontier[2]
  local dropped = redis.call('ZREMRANGEBYLEX', KEYS[2], '-', '(' .. padded)
  if dropped > 0 then redis.call('HINCRBY', KEYS[3], 'large', -dropped) end
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
