--[[
  schedule-publish.lua: publish one event for later (SPEC §5.6 "Scheduled delivery"): keep
  it, signed and with its fields, in the stream's schedule until its due time — or append it
  now when that time has already come.

  The due time is fixed here, on the Redis clock (TIME): 'in' counts the delay from Redis's
  now, never from the publisher's clock; 'at' is an instant the publisher named. The event
  is kept under its event_id (lib/schedule-move.lua describes the schedule's two keys), so
  the schedule can hold one event per event_id and never two.

  Dedupe (SPEC §6.1, covering scheduled events). The same event_id published again —
  scheduled or not, with another due time or not — answers the original:
    - with the dedupe window on (ARGV[1] > 0), the dedupe record KEYS[6] holds
      'scheduled@<due ms> <digest>' from now until the due time plus the window (the window
      counts from when the event enters the stream, as an immediate publish's counts from
      its append). publish.lua reads the same record, so an immediate publish of a
      scheduled event_id is a duplicate too. The record is not rewritten when the event is
      moved (the move does not know its key): a repeat after the move, inside the window,
      still answers 'scheduled@<due>' — a duplicate, with no entry id. A cancel rewrites it
      to 'cancelled@<due> <digest>' (schedule-cancel.lua): the event_id stays spent for the
      rest of its window, so a retried publish does not bring a cancelled event back.
    - with or without the window, an event_id still in the schedule is a duplicate of it
      (its stored body gives the digest), so a record that expired while the event waited
      for a late move cannot let a second copy in.
  The same event_id with a different body is a reused key (status 2), as in publish.lua.
  A due time already reached appends now, exactly as publish.lua does (record '<id> <digest>').

  KEYS[1]  stream
  KEYS[2]  the stream's sizes hash, KEYS[3] its large-entry set (lib/record-size.lua)
  KEYS[4]  the stream's schedule (sorted set), KEYS[5] its field store (hash)
  KEYS[6]  dedupe record key, <prefix><event_id> — only when ARGV[1] > 0
  ARGV[1]  dedupe window, seconds (0: off)
  ARGV[2]  how many leading field/value pairs make up the body the digest covers
  ARGV[3]  event_id
  ARGV[4]  'at': ARGV[5] is the due time, ms epoch | 'in': ARGV[5] is a delay, ms from now
  ARGV[5]  non-negative integer, ms
  ARGV[6]  longest delay allowed, ms: a due time further than this from now is refused
  ARGV[7..] the entry's field, value pairs, in order (at most MAX_VALUES values)

  Reply: { status, original, due, now }
    status    0 appended now (due time reached); 1 duplicate; 2 key reused; 3 scheduled;
              4 refused: due time too far from now (nothing written)
    original  0: the new entry id; 1, 2: the original's entry id, or 'scheduled@<due>' /
              'cancelled@<due>' when the original was scheduled; 3, 4: ''
    due       the due time this request asked for (ms epoch, Redis clock)
    now       Redis's now (ms epoch) when the script ran
]]
-- #include lib/record-size.lua
-- #include lib/publish-digest.lua
-- #include lib/schedule-entry.lua

-- A scheduled entry is appended through unpack() at its move: keep it far below Lua's limit,
-- and far above the publisher's widest entry (six fields).
local MAX_VALUES = 128
local stream, sizes_key, large_key, due_key, entries_key, record_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local window = tonumber(ARGV[1])
local body_pairs = tonumber(ARGV[2])
local event_id, mode, amount, max_delay = ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local FIRST = 7

local values = #ARGV - FIRST + 1
if values < 2 or values % 2 == 1 or values > MAX_VALUES then
  return redis.error_reply('ERR schedule-publish: the entry must be 1..' .. (MAX_VALUES / 2) .. ' field/value pairs')
end
if (mode ~= 'at' and mode ~= 'in') or not string.match(amount, '^%d+$') or #amount > 15 then
  return redis.error_reply('ERR schedule-publish: ARGV[4..5] must be at|in and a non-negative integer of ms')
end
if window > 0 and record_key == nil then
  return redis.error_reply('ERR schedule-publish: KEYS[6] (the dedupe record) is required with a dedupe window')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local due = tonumber(amount)
if mode == 'in' then due = now + due end
local digest = publish_digest(ARGV, FIRST, body_pairs)

if window > 0 then
  local record = redis.call('GET', record_key)
  if record then
    local original, stored = string.match(record, '^(%S+) (%x+)$')
    if original and stored ~= digest then return { 2, original, due, now } end
    -- A duplicate rewrites its record unchanged (KEEPTTL), as publish.lua does: a write of
    -- this connection, so a WAIT / WAITAOF behind this call covers the original's writes too.
    redis.call('SET', record_key, record, 'KEEPTTL')
    return { 1, original or record, due, now }
  end
end
local scheduled_at = redis.call('ZSCORE', due_key, event_id)
if scheduled_at then
  local original = 'scheduled@' .. scheduled_at
  local fields = unpack_schedule_entry(redis.call('HGET', entries_key, event_id))
  if fields and publish_digest(fields, 1, body_pairs) ~= digest then return { 2, original, due, now } end
  return { 1, original, due, now }
end

if due - now > max_delay then return { 4, '', due, now } end

local due_text = string.format('%.0f', due)
if due <= now then
  local entry_id = redis.call('XADD', stream, '*', unpack(ARGV, FIRST))
  if window > 0 then redis.call('SET', record_key, entry_id .. ' ' .. digest, 'EX', window) end
  record_entry_size(sizes_key, large_key, entry_id, ARGV, FIRST)
  return { 0, entry_id, due, now }
end

redis.call('ZADD', due_key, due_text, event_id)
redis.call('HSET', entries_key, event_id, pack_schedule_entry(ARGV, FIRST))
if window > 0 then
  -- Until the due time, then a whole window from it (rounded up to whole seconds).
  local ttl = math.ceil((due - now) / 1000) + window
  redis.call('SET', record_key, 'scheduled@' .. due_text .. ' ' .. digest, 'EX', ttl)
end
return { 3, '', due, now }
