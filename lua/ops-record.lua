--[[
  ops-record.lua: the dashboard's memory of one consumer (issue 17 §1), written once at the end
  of a poll run. Lambdas and Workers keep nothing between runs, so the oldest-pending-age chart
  and the recent-runs table read what this script leaves in Redis.

  One sample per bucket: a run ending in the same bucket as the newest sample replaces it (its
  counts added to the bucket's), so frequent wake-up runs do not shorten the chart's time span.
  The list is capped; the newest sample is at index 0.

  Age is measured as the backlog probe measures it: Redis TIME minus the millisecond part of the
  oldest pending entry's id (append time, not idle time, which redelivery resets).

  KEYS[1]  source stream
  KEYS[2]  its dead-letter stream
  KEYS[3]  samples list of this group
  KEYS[4]  runs list (the caller picks the active or the idle one)
  ARGV[1]  group
  ARGV[2]  bucket width, ms
  ARGV[3]  samples kept
  ARGV[4]  acked by this run
  ARGV[5]  the run record (JSON text; stored as given)
  ARGV[6]  runs kept

  Sample text: "<t_ms> <oldest_age_ms or -1> <pending> <dlt_length> <acked in the bucket>"
  Reply: the sample text written.
]]
local group = ARGV[1]
local bucket = tonumber(ARGV[2])

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- pcall: a group deleted behind the run leaves a sample of nothing pending, not an error.
local pending, age = 0, -1
local ok, summary = pcall(redis.call, 'XPENDING', KEYS[1], group)
if ok and summary[1] > 0 then
  pending = summary[1]
  local oldest_ms = tonumber(string.match(summary[2], '^(%d+)'))
  age = math.max(0, now_ms - oldest_ms)
end
local dead = redis.call('XLEN', KEYS[2])

local acked = tonumber(ARGV[4])
local head = redis.call('LINDEX', KEYS[3], 0)
local t, a = string.match(head or '', '^(%d+) %S+ %S+ %S+ (%d+)$')
local same_bucket = t and math.floor(tonumber(t) / bucket) == math.floor(now_ms / bucket)
if same_bucket then acked = acked + tonumber(a) end
local sample = string.format('%d %d %d %d %d', now_ms, age, pending, dead, acked)
if same_bucket then
  redis.call('LSET', KEYS[3], 0, sample)
else
  redis.call('LPUSH', KEYS[3], sample)
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[3]) - 1)
end

redis.call('LPUSH', KEYS[4], ARGV[5])
redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[6]) - 1)
return sample
