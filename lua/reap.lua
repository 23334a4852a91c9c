--[[
  reap.lua: delete consumers that hold nothing and have been idle too long (SPEC §7).

  Per-run consumer names (e.g. one per request id) would otherwise grow every group without
  bound. XGROUP DELCONSUMER discards the consumer's pending entries, so the check
  "zero pending" and the delete must be one atomic step: inside this script no read can
  hand the consumer a new entry between the XINFO and the DELCONSUMER. A consumer with
  pending entries is never deleted, however long it has been idle — its entries are the
  reclaim path's job, and an idle consumer that still holds entries is worth a look
  (reported as busy_idle).

  Deleting an empty consumer loses nothing: the next XREADGROUP or XAUTOCLAIM under that
  name creates it again.

  KEYS[1]   source stream
  ARGV[1]   idle threshold, ms: only consumers idle strictly longer are deleted
  ARGV[2]   at most this many deletions per call (bounds the script's run time)
  ARGV[3..] group names to reap; none = every group on the stream

  Reply: { deleted, busy_idle }
    deleted    flat list { group, consumer, group, consumer, ... } of the deleted consumers
    busy_idle  consumers idle longer than the threshold that were kept for their pending entries
]]
local stream = KEYS[1]
local threshold = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])

local function field(flat, name)
  for i = 1, #flat - 1, 2 do
    if flat[i] == name then return flat[i + 1] end
  end
  return nil
end

if redis.call('EXISTS', stream) == 0 then return { {}, 0 } end

-- Every group on the stream, or the requested ones that exist (a missing group holds nothing).
local existing, groups = {}, {}
for _, info in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
  local name = field(info, 'name')
  if type(name) == 'string' then
    existing[name] = true
    if #ARGV == 2 then groups[#groups + 1] = name end
  end
end
for i = 3, #ARGV do
  if existing[ARGV[i]] then groups[#groups + 1] = ARGV[i] end
end

local deleted, busy_idle, count = {}, 0, 0
for _, group in ipairs(groups) do
  for _, info in ipairs(redis.call('XINFO', 'CONSUMERS', stream, group)) do
    local name, pending, idle = field(info, 'name'), field(info, 'pending'), field(info, 'idle')
    -- Anything unreadable counts as "not provably empty and idle": keep it.
    if type(name) == 'string' and type(pending) == 'number' and type(idle) == 'number' and idle > threshold then
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
