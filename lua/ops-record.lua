--[[
  ops-record.lua: the dashboard's memory of one run (issue 17 §1), written at the end of a
  run that did something, or of an idle one at most once per interval (run-history.ts).
  Lambdas and Workers keep nothing between runs, so the oldest-pending-age chart and the
  recent-runs table read what this script leaves in Redis. One call, so a recorded run costs
  one billed command more (SPEC §10).

  The run record goes to the head of a capped list. A poll run also writes its consumer's
  age sample: one sample per bucket — a run ending in the same bucket as the newest sample
  replaces it (its counts added to the bucket's), so frequent wake-up runs do not shorten the
  chart's time span. The samples list is capped; the newest sample is at index 0.

  Age is measured as the backlog probe measures it: Redis TIME minus the millisecond part of the
  oldest pending entry's id (append time, not idle time, which redelivery resets).

  KEYS[1]  runs list (the caller picks a consumer's active or idle list, or the deployment's
           list of trim and relay runs)
  ARGV[1]  the run record (JSON text; stored as given)
  ARGV[2]  runs kept
  With a sample (poll runs; all on the stream's slot):
  KEYS[2]  source stream
  KEYS[3]  its dead-letter stream
  KEYS[4]  samples list of this group
  ARGV[3]  group
  ARGV[4]  bucket width, ms
  ARGV[5]  samples kept
  ARGV[6]  acked by this run

  Sample text: "<t_ms> <oldest_age_ms or -1> <pending> <dlt_length> <acked in the bucket>"
  Reply: the sample text written ('' without a sample).
]]
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if #KEYS < 4 then return '' end

local group = ARGV[3]
local bucket = tonumber(ARGV[4])

local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- pcall: a group deleted behind the run leaves a sample of nothing pending, not an error.
local pending, age = 0, -1
local ok, summary = pcall(redis.call, 'XPENDING', KEYS[2], group)
if ok and summary[1] > 0 then
  pending = summary[1]
  local oldest_ms = tonumber(string.match(summary[2], '^(%d+)'))
  age = math.max(0, now_ms - oldest_ms)
end
local dead = redis.call('XLEN', KEYS[3])

local acked = tonumber(ARGV[6])
local head = redis.call('LINDEX', KEYS[4], 0)
local t, a = string.match(head or '', '^(%d+) %S+ %S+ %S+ (%d+)$')
local same_bucket = t and math.floor(tonumber(t) / bucket) == math.floor(now_ms / bucket)
if same_bucket then acked = acked + tonumber(a) end
local sample = string.format('%d %d %d %d %d', now_ms, age, pending, dead, acked)
if same_bucket then
  redis.call('LSET', KEYS[4], 0, sample)
else
  redis.call('LPUSH', KEYS[4], sample)
  redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[5]) - 1)
end
return sample
