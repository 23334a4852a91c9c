--[[
  claim.lua: one claim of a run, inside the byte budget (SPEC §5.1 "Claim", "Byte budget").
  It reclaims the pending entries that are due (SPEC §5.6) from the shared cursor and decides
  how the fresh entries are read, so that the reply (and the fresh read beside it) never
  carries more than the byte allowance the run still has, and no step copies more through Lua
  than it must.

  Reclaim. The PEL is paged from the cursor stored in Redis: a poll function keeps no memory
  between runs, and restarting at the first pending entry every run would let a first page of
  entries that are not due (or always retained) starve every entry behind it; 0-0 as the next
  cursor means a full pass finished. A stored cursor this script cannot use restarts the pass
  at 0-0 instead of failing every round from then on (a permanent outage of the consumer): not
  an entry id (lost, written by hand) or one XPENDING rejects (a 64-bit overflow) — the pass
  restarts and the next cursor is stored over it (note 'reset'); a key of another type — every
  pass starts at 0-0 and the key is left alone, since an explicit keys.cursor can name a key
  this library did not write (note 'wrong_type'). An error with cursor 0-0 is not the cursor's
  fault (NOGROUP, a stream of the wrong type): it is returned and nothing is written.

  The PEL is read with XPENDING <start> + COUNT <n + 1> (no IDLE filter, whose scan Redis does
  not bound): id, owner, idle and delivery count of each row, the (n + 1)th only to name where
  the next page starts. Pages grow from ARGV[4] rows (enough when most rows are due) by doubling,
  up to scan = 10 × ARGV[4] rows in all — the bound XAUTOCLAIM puts on its own scan. Each row is
  judged by due_at (section "when an entry is due" below, the one place that decides it, on the
  Redis clock): a row that is not due is skipped — not touched, not lost — and its due time
  lowers next_due; a due row is taken with XCLAIM (min-idle minIdle, which counts the delivery
  and copies the entry; an entry deleted from the stream comes back empty and leaves the PEL,
  and is reported in deleted_ids) while the allowance lasts. The first due entry that does not
  fit is put back as it was (its idle and delivery count from the row), the cursor is stored at
  it, and the claim stops there: nothing after it was touched, so nothing is skipped. At most
  ARGV[4] entries are taken (deleted ones included); the cursor then stops at the next row. A
  due entry with a deferral record (KEYS[6]) loses the record when it is taken or found deleted.
  With fixed backoff at min idle and no deferrals this takes what XAUTOCLAIM <cursor> COUNT
  ARGV[4] took, and stores the cursor it returned (an entry deleted from the stream is reported
  once due, where XAUTOCLAIM reported it at any idle time).

  Fresh read, three ways (ARGV[8]):
    'none'    no fresh entries this claim.
    'lua'     XREADGROUP here: in one step when the proof of 'native' below holds (the
              entries provably fit), else in steps sized from what the previous steps
              weighed (1 entry first), so a batch of large entries is not copied whole to
              find that one fits.
              The entries of the last step past the allowance are handed back to the stream
              in the same script: XGROUP SETID moves the group's last-delivered id back before
              them first (a failure after it leaves them pending and unread, to be delivered
              again — never lost), then XACK takes them out of this group's PEL; the next read
              delivers them again, in order, as if never read. REST clients (one script per
              claim) and a run's first claim read this way. (Over TCP 'native' stays the
              cheaper way even for a batch of ten 300 B entries: copying entries through
              Lua costs Redis about 3 µs each, more than the transaction and gate.)
    'native'  the caller sends, right after this script inside one MULTI/EXEC,
              XREADGROUP … COUNT ARGV[7] STREAMS <stream> <gate> > >, which copies nothing
              through Lua. This script proves first that those entries fit, from what the
              writers that record sizes (append.lua, publish.lua, redrive.lua, the schedule
              move) keep: KEYS[3] counts their appends (appended = 'plain' + 'keyed', and
              'appended' of writers from before key records), the size records they hold
              ('large'), what retention.lua removed ('trimmed', and 'keyed_trimmed' key
              records); KEYS[4] holds one record per entry larger than SMALL, with its size,
              and one per entry with a flow key, ordered by entry id (lib/record-size.lua).
              The proof holds when every entry of the stream came from such a writer and none
              was removed by another hand (appended = entries-read + lag, XLEN + trimmed =
              appended), no record is missing (ZCARD = large + keyed - keyed_trimmed), the
              group is not behind 'recorded_from' (the padded id up to which records may be
              gone: set when the counts start over, raised by retention.lua), and the lag is
              known (Redis reports none while a deleted entry
              lies after the group's last-delivered id). Then the read delivers the first
              min(count, lag) entries after the last-delivered id — nothing interleaves in a
              MULTI — and the large ones among them are the first records after that id, so
              they weigh at most those records' sizes plus SMALL for each other entry. Proven:
              this claim's gate (a consumer group on the empty stream KEYS[5], unique to the
              claim, deleted in the same transaction) is created and the read goes ahead. Not
              proven: the entries are read here as in 'lua', the gate is never created, and the
              read beside fails with NOGROUP on it, delivering nothing.
  A stream some other writer or hand touched is proven again once every group has read all of
  it (last-delivered = last-generated id): nothing unread is then of unknown size, and the
  counts start over from what Redis reports.

  With flow leases (a token; no share, no rate limit) a native read is proven only when every
  entry also came from a writer that records flow keys (the older writers' 'appended' is 0:
  the counts started over since one last appended), and the gate's group starts at this
  group's last-delivered id. The
  caller then sends, in place of the gate's DEL, this script again with ARGV[8] = 'admit':
    'admit'   admits the entries the native read just delivered (section 3), from their key
              records alone: the window is (the gate group's last-delivered id, this group's
              last-delivered id], and an entry of it without a key record has no flow key.
              Nothing interleaves in the MULTI, so it is as if this claim had read them (strict
              order included). It deletes the gate; without a gate (the read was not proven, the
              claim read through Lua) it does nothing. Reply: { parked_ids, parked_limited,
              ready_more, next_due, keyed }, parked_ids being the entries of the read the run
              must not handle (they were put back as parked), keyed the key records the window
              held (the caller checks it against the entries that name a flow key, and starts
              none on a mismatch). ARGV[4], ARGV[7] and ARGV[14] are ignored.

  KEYS[1]  source stream
  KEYS[2]  cursor key (string; absent = 0-0)
  KEYS[3]  sizes hash: 'plain', 'keyed', 'appended', 'large', 'trimmed', 'keyed_trimmed',
           'recorded_from' (see above)
  KEYS[4]  size and key records: sorted set, score 0, members '<ms>-<seq> <bytes>' (entries
           larger than SMALL) and 'k<ms>-<seq> <id> <flow key>', both parts of the first id
           zero-padded to 20 digits (lib/record-size.lua)
  KEYS[5]  this claim's gate stream
  KEYS[6]  deferral hash of this group: entry id -> not-before, Redis ms (settle.lua writes it)
  KEYS[7]  the stream's schedule: due-time sorted set      } SPEC §5.6, lib/schedule-move.lua
  KEYS[8]  the stream's schedule: packed entries hash      }
  KEYS[9]  flow leases of this group (lib/flow-lease.lua; touched only with a flow token)
  KEYS[10] flow: the group's ready keys (a set; see lib/flow-lease.lua)
  KEYS[11] flow: the group's per-key queues (a sorted set; see lib/flow-lease.lua)
  KEYS[12] rate limit: the group's theoretical arrival time (a string, Redis ms; see below)
  ARGV[1]  group
  ARGV[2]  consumer
  ARGV[3]  min idle, ms
  ARGV[4]  max entries to reclaim (0: no reclaim)
  ARGV[5]  byte allowance of this claim (ids, field names and values of what it returns)
  ARGV[6]  '1' when the run holds nothing else: then one entry larger than the allowance may
           be taken alone (SPEC §5.1)
  ARGV[7]  fresh entries asked for
  ARGV[8]  'none' | 'lua' | 'native' | 'admit' (see above)
  ARGV[9]  retry backoff: 'fixed' | 'exponential'
  ARGV[10] retry base, ms (>= min idle)
  ARGV[11] retry factor (exponential)
  ARGV[12] retry max, ms (exponential)
  ARGV[13] retry jitter, 0..1
  ARGV[14] most scheduled events moved into the stream by this claim (0: no move)
  ARGV[15] flow: the run's lease token ('' = no flow control: the steps below skip it all)
  ARGV[16] flow: lease length, ms (the run's deadline + overrun, less the caller's now)
  ARGV[17] flow: most runs that may hold one key at once (the limit)
  ARGV[18] flow: '1' for strict per-key order (a dead run's pending entries become heads)
  ARGV[19] rate limit: ms between two starts, T (0: no limit)
  ARGV[20] rate limit: the burst's tolerance, τ = (burst - 1) × T, ms
  ARGV[21] flow: the share, most entries of one flow key this claim admits (0: no cap)
  ARGV[22] rate limit: '1' per flow key (T and τ apply to each key's own bucket), else per group

  Reply: { next_cursor, reclaimed, deleted_ids, delivery_counts, cursor_note, fresh_via,
           fresh, cut, bytes, next_due, now, idle_before, moved, parked, parked_fresh,
           rate_limited, fresh_asked, ready_more, parked_limited }
    next_cursor      the stored cursor ('' when no reclaim ran)
    reclaimed        entries reclaimed: { {id, {field, value, ...}}, ... }
    deleted_ids      pending ids whose entries were deleted (XCLAIM drops them from the PEL)
    delivery_counts  one integer per reclaimed entry, as counted after this claim
    cursor_note      '' | 'reset' | 'wrong_type'
    fresh_via        'none' | 'lua' (fresh holds them) | 'native' (the read beside delivers them)
    fresh            fresh entries read here (fresh_via 'lua')
    cut              1 when the allowance left entries behind (the reply is short for bytes,
                     not because the stream or the PEL ran out), else 0
    bytes            what this claim counts against the allowance: the measured size of what
                     it returns here, plus the proven bound of a native read beside it
    next_due         the earliest due time (Redis ms) among the pending entries this claim saw
                     and did not take because they were not due; '' when none. TIME is read
                     after the rows' idle times, so it is never before the true due time (at
                     most the few ms between the two readings after it)
    now              the Redis clock (ms) this claim judged by; '' when it read none
    idle_before      one integer per reclaimed entry: its idle time (ms) when this claim took
                     it. A run that gives the entry back unstarted restores that idle, so the
                     entry is due again at once (release.lua), its backoff having passed.
    moved            scheduled events this claim moved into the stream (they are read by the
                     fresh read of this same claim, or a later one)
    parked           entries this claim took and parked because their flow key was busy
    parked_fresh     of those, fresh ones (read, so the stream has moved past them)
    rate_limited     1 when the rate limit let this claim take fewer entries than asked
    fresh_asked      fresh entries the read asked for: ARGV[7], less what the rate limit and
                     the ready keys took of it (a read shorter than this found the stream's end)
    ready_more       1 when this claim served ready keys or made keys ready and some are still
                     ready: the next claim has entries to serve (a drain goes on), else 0
    parked_limited   of the parked, those whose key's rate limit had no room (or a handler's
                     hold kept the key), at its front or queued behind: waiting on a limit

  Rate limit (SPEC §5.7, with T > 0): GCRA on the Redis clock, one theoretical arrival time
  (TAT) per group in KEYS[12]. Before anything is read, the room is how many entries may start
  now: floor((now + τ - max(TAT, now)) / T) + 1, or 0; the reclaim and the fresh read take at
  most that many, and what this claim returns advances TAT by T each (entries it parks do not
  advance it, though the room they took is not given to others in this claim). Over any window
  of W ms at most burst + W / T entries are admitted, fleet-wide.
  Entries over the limit are simply not claimed: they stay unread or pending as they are,
  never dead-lettered, and next_due says when the next one may start.
  Per flow key (ARGV[22] = '1', with a token): the same GCRA with one TAT per key, kept in
  the key's lease state (lib/flow-lease.lua), and checked where an entry is admitted: an
  entry whose key has no room is parked like one behind a busy key, its not-before when the
  key's bucket next has room (next_due says so), and the key's later entries wait behind it in
  order; other keys are not held up (rate_limited stays 0). A key's hold (a handler's deferral
  with retryAfterMs, written by settle.lua) closes its bucket until then the same way.

  Flow leases (SPEC §5.7, with a token only). Every entry taken above that names a flow key
  (its last flow_key field) is admitted only under a lease on that key and only when no
  earlier entry of the key waits in its queue (lib/flow-lease.lua): the run's own holder
  takes it (a run handles its entries of one key one at a time, by its ordering key), or a
  new holder does while fewer than `limit` runs hold the key. An entry that cannot be
  admitted is parked, never returned: put back in this consumer's PEL as if never claimed
  (its delivery count before this claim, idle at least minIdle, so it is due once nothing
  defers it), with a not-before at the earliest holder's expiry (or this lease's, when the
  key is free and only its queue is ahead) in the deferral hash, and queued ('p'). It is
  looked at again when its key is served from the ready queue or when that not-before
  passes: never every round. Ready keys (a slot is free while entries wait) are served before
  the reclaim's cursor pass, first ready first served: each key's queue, in id order, is
  claimed here under a lease of this run, within half the reclaim count plus half the fresh
  count (the cursor pass keeps the rest of the reclaim count: ready keys never starve the
  PEL's due entries; what they take beyond their half of it comes off the fresh read, so the
  claim never returns more than it was asked for) and the byte allowance; a parked entry is
  taken at once, a head only when due (otherwise the key waits for it: the cursor pass takes
  the head when it is due, and its settle makes the key ready again); a key served with more
  waiting goes to the back of the queue (one the byte allowance stopped keeps its place).
  Entries without a key are admitted as before. A native fresh read with flow on is admitted
  by the 'admit' call beside it, from the entries' key records (see the header), by the same
  steps.

  Fair batches (SPEC §5.7, with a share s = ARGV[21] > 0): one claim admits at most s entries
  of one key, whichever way they came (ready queue, cursor pass, fresh read); the rest of the
  key's entries are parked as above and the key goes to the back of the ready queue. The
  bound: the ready queue is round robin and each turn takes at most s entries, so a key that
  becomes ready behind R other keys is served within R × s admissions of the ready pass —
  within ceil((R + 1) × s / r) claims that serve the queue, where r = floor(reclaim count / 2)
  + floor(fresh count / 2) is the claim's ready room — and a key that reaches the fresh read
  is admitted in that claim (s ≥ 1 of its entries), however many entries of other keys the
  read holds. The cost is read-ahead: to reach the other keys' entries, the fresh read walks
  past a hot key's burst, and every entry over the share is parked (put back in this
  consumer's PEL, a queue member and a deferral record: ~200 B of Redis memory each, and an
  XCLAIM, a ZADD and an HSET now, a ZRANGEBYLEX, an XPENDING, an XCLAIM and a ZREM when served).
  A run's memory is untouched: parked entries are never returned.

  Scheduled events (SPEC §5.6). Before anything else reads the stream, the due ones are moved
  into it (lib/schedule-move.lua: never early by the Redis clock, at most once, never lost),
  so the fresh read of this same claim can deliver them; an empty schedule costs one ZRANGE
  and no extra round trip. It runs before XINFO GROUPS: the native proof compares the group's
  lag with the writers' counts, and the move appends (and records, as every writer
  does). The schedule's next due time lowers next_due, so a poller woken then finds it due.
  due_at(id, deliveries, idle, not_before) is the due rule for any pending entry (a key's
  head, SPEC §5.7).
]]
-- #include lib/schedule-move.lua
-- #include lib/stream-id.lua
local stream, cursor_key, sizes_key, large_key, gate_key, defer_key = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local group, consumer, min_idle = ARGV[1], ARGV[2], ARGV[3]
local reclaim_count = ARGV[8] == 'admit' and 0 or tonumber(ARGV[4])
local allowance = tonumber(ARGV[5])
local alone = ARGV[6] == '1'
local fresh_count = tonumber(ARGV[7])
local fresh_mode = ARGV[8]
local lease_key, ready_key, queue_key, flow_token = KEYS[9], KEYS[10], KEYS[11], ARGV[15] or ''
local flow_strict = ARGV[18] == '1'
local flow_share = tonumber(ARGV[21]) or 0
local rate_per_key = ARGV[22] == '1' and flow_token ~= ''
local rate_key, rate_interval, rate_tolerance = KEYS[12], tonumber(ARGV[19]), tonumber(ARGV[20])
-- A native read would start entries the rate limit never counted, and a share is counted over
-- the whole claim: both need every entry in this script.
if (rate_interval > 0 or flow_share > 0) and fresh_mode == 'native' then fresh_mode = 'lua' end
-- The second call of a native read with flow leases (see the header): only section 3 runs.
local admit_mode = fresh_mode == 'admit'
if admit_mode then
  if rate_interval > 0 or flow_share > 0 or flow_token == '' then return { {}, 0, 0, '', 0 } end
  fresh_mode = 'none'
end
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

local function field_map(flat)
  local map = {}
  for i = 1, #flat - 1, 2 do map[flat[i]] = flat[i + 1] end
  return map
end

-- ---- the Redis clock, read once, and the earliest due time this claim saw
local now_ms
local function redis_now()
  if not now_ms then
    local now = redis.call('TIME')
    now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  end
  return now_ms
end
local next_due
local function saw_due_at(ms)
  if next_due == nil or ms < next_due then next_due = ms end
end

-- ---- 0. due scheduled events into the stream, before anything reads it (see the header)
local moved = 0
local max_moved = admit_mode and 0 or tonumber(ARGV[14])
if max_moved > 0 then
  local schedule_due = schedule_head(KEYS[7])
  -- Only into a stream this group reads: a group created after this claim (on the NOGROUP that
  -- follows; startFrom '$') would start past what was moved and never see it. Bounded like the
  -- reply: about the claim's allowance of packed bytes per claim.
  if schedule_due >= 0 and schedule_due <= redis_now() and not is_error(redis.pcall('XPENDING', stream, group, '-', '+', 1)) then
    moved, schedule_due = move_due_events(stream, KEYS[7], KEYS[8], sizes_key, large_key, max_moved, math.max(1, allowance))
  end
  if schedule_due >= 0 then saw_due_at(schedule_due) end
end

-- The groups as Redis reports them, read before the claim writes anything (the move above stands
-- on its own: what it appended is in the stream either way): a refusal here (NOGROUP comes
-- later, from the reads; this fails on a missing stream or a user denied XINFO) changes nothing
-- of the group. Only the fresh reads need it.
local groups, mine = {}, nil
if fresh_mode ~= 'none' then
  local listed = redis.pcall('XINFO', 'GROUPS', stream)
  if is_error(listed) then
    if not string.find(listed.err, 'no such key', 1, true) then return listed end
    listed = {}
  end
  for _, flat in ipairs(listed) do
    local info = field_map(flat)
    groups[#groups + 1] = info
    if info['name'] == group then mine = info end
  end
end

-- Bytes taken so far; the first entry may exceed the allowance when the run holds nothing else.
local taken, cut = 0, 0
local function fits(bytes)
  return taken + bytes <= allowance or (alone and taken == 0)
end

-- ---- when an entry is due (SPEC §5.6): the one place that decides it
local min_idle_ms = tonumber(min_idle)
local backoff, retry_base, retry_factor, retry_max, retry_jitter = ARGV[9], tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local PRIME, MIX, MAX_STEPS = 2147483647, 48271, 2000

-- A number in [0, 1) from the id and the count, the same in every run (retry.ts unitHash):
-- jitter that every run judges alike. Every intermediate stays below 2^53 (exact in doubles).
local function unit_hash(id, deliveries)
  local h = deliveries % PRIME + 1
  for i = 1, #id do h = (h * 31 + string.byte(id, i)) % PRIME end
  h = (h * MIX) % PRIME
  h = (h * MIX) % PRIME
  return h / PRIME
end

-- The least idle time after which an entry delivered `deliveries` times may be delivered again
-- (retry.ts retryAfterMs, step for step): min idle below one delivery (given back, never handled).
local function retry_after(id, deliveries)
  if deliveries < 1 then return min_idle_ms end
  local delay = retry_base
  if backoff == 'exponential' then
    for _ = 2, math.min(deliveries, MAX_STEPS) do
      if delay >= retry_max then break end
      delay = delay * retry_factor
    end
    if delay > retry_max then delay = retry_max end
  end
  if retry_jitter > 0 and delay > min_idle_ms then delay = delay * (1 - retry_jitter * unit_hash(id, deliveries)) end
  delay = math.floor(delay)
  if delay < min_idle_ms then return min_idle_ms end
  return delay
end

-- When a pending entry is due, Redis ms: its last delivery (now - idle) plus retry_after, and
-- never before its deferral's not-before. Due means due_at(...) <= redis_now().
local function due_at(id, deliveries, idle, not_before)
  local at = redis_now() - idle + retry_after(id, deliveries)
  if not_before and not_before > at then return not_before end
  return at
end

-- Not-before times of these ids from the deferral hash (the caller passes none when it does not exist).
local HASH_CHUNK = 1000
local function not_before_of(ids)
  local found = {}
  if #ids == 0 then return found end
  for first = 1, #ids, HASH_CHUNK do
    local last = math.min(first + HASH_CHUNK - 1, #ids)
    local values = redis.call('HMGET', defer_key, unpack(ids, first, last))
    for i = first, last do
      local value = values[i - first + 1]
      if value then found[ids[i]] = tonumber(value) end
    end
  end
  return found
end

local function forget_deferrals(ids)
  for first = 1, #ids, HASH_CHUNK do
    redis.call('HDEL', defer_key, unpack(ids, first, math.min(first + HASH_CHUNK - 1, #ids)))
  end
end

-- ---- 1. reclaim
local next_cursor, reclaimed, deleted, counts, idles, note = '', {}, {}, {}, {}, ''
-- The most entries the cursor pass leaves in `reclaimed` and `deleted` (1a may raise it).
local reclaim_limit = reclaim_count

-- Judges one page of XPENDING rows in order; true when the claim must stop here (it took its
-- count, or the allowance ran out), with next_cursor set to the first row not taken.
local function judge(rows, last, deferred, forget)
  for i = 1, last do
    local id, idle, count = rows[i][1], rows[i][3], rows[i][4]
    if #reclaimed + #deleted >= reclaim_limit then
      next_cursor = id
      return true
    end
    local at = due_at(id, count, idle, deferred[id])
    if at > redis_now() then
      saw_due_at(at)
    else
      -- Counts this delivery, and copies the entry: the only entries copied are ones looked at.
      local entry = redis.call('XCLAIM', stream, group, consumer, min_idle, id)[1]
      if entry == nil then
        -- Deleted from the stream (XCLAIM dropped it from the PEL), unless still pending: a
        -- clock that stepped back between the rows and the claim; then it waits, untouched.
        if redis.call('XPENDING', stream, group, id, id, 1)[1] == nil then
          deleted[#deleted + 1] = id
          if deferred[id] then forget[#forget + 1] = id end
        end
      elseif fits(entry_bytes(entry)) then
        taken = taken + entry_bytes(entry)
        reclaimed[#reclaimed + 1] = entry
        counts[#counts + 1] = count + 1
        idles[#idles + 1] = idle
        if deferred[id] then forget[#forget + 1] = id end
      else
        -- Put back as it was (still due), and the next claim starts here.
        redis.call('XCLAIM', stream, group, consumer, 0, id, 'IDLE', idle, 'RETRYCOUNT', count, 'JUSTID')
        cut, next_cursor = 1, id
        return true
      end
    end
  end
  return false
end

-- ---- rate limit: the room this claim has (see the header)
local rate_tat, rate_room, rate_limited = nil, nil, 0
if rate_interval > 0 and not rate_per_key then
  rate_tat = math.max(tonumber(redis.call('GET', rate_key)) or 0, redis_now())
  local slack = redis_now() + rate_tolerance - rate_tat
  rate_room = slack < 0 and 0 or math.floor(slack / rate_interval) + 1
  if rate_room < reclaim_count + fresh_count then rate_limited = 1 end
  reclaim_count, fresh_count = math.min(reclaim_count, rate_room), math.min(fresh_count, rate_room)
  if rate_room == 0 then saw_due_at(math.ceil(rate_tat - rate_tolerance)) end
end

-- The flow fragments come this late in the script: settle.lua, which follows it in the
-- generated module, carries lib/flow-lease.lua too, and gzip finds that second copy only within
-- 32 KiB of the first (scripts/build-lua.mjs).
-- #include lib/flow-admit.lua

-- ---- 1a. flow: ready keys first, first ready first served (see the header), within half the
-- reclaim count and half the fresh count: the cursor pass below keeps the other half of the
-- reclaim count, so a steady stream of ready keys never starves the PEL.
local admitted_of = {}
-- How many more entries of `key` this claim may admit (fair batches: the share).
local function share_left(key)
  if flow_share <= 0 then return math.huge end
  return flow_share - (admitted_of[key] or 0)
end
local function count_admitted(key)
  if flow_share > 0 then admitted_of[key] = (admitted_of[key] or 0) + 1 end
end
-- A key's own bucket (per-key rate limit) and hold: room to start one entry now?
local function key_has_room(state, now)
  if state.hold > now then return false end
  return not rate_per_key or math.max(state.tat, now) - now <= rate_tolerance
end
-- Takes one start from the key's bucket (per-key rate limit).
local function key_take(state, now)
  if rate_per_key then state.tat = math.max(state.tat, now) + rate_interval end
end
-- When the key next has room, Redis ms.
local function key_room_at(state)
  local at = state.hold
  if rate_per_key and math.ceil(state.tat - rate_tolerance) > at then at = math.ceil(state.tat - rate_tolerance) end
  return at
end
local ready_of_reclaim = math.floor(reclaim_count / 2)
local ready_room = admit_mode and 0 or ready_of_reclaim + math.floor(fresh_count / 2)
local ready_served, ready_added = 0, 0
if flow_token ~= '' and ready_room > 0 then
  local expires, limit = redis_now() + tonumber(ARGV[16]), tonumber(ARGV[17])
  local keys, served, visited, back = flow_ready_read(ready_key, 0, ready_room - 1), {}, {}, {}
  for _, key in ipairs(keys) do
    if #reclaimed + #deleted >= ready_room or cut == 1 then break end
    local state = flow_open(redis.call('HGET', lease_key, key), redis_now(), flow_token, flow_strict, stream, group, queue_key, key)
    -- Busy again (taken meanwhile): the holder's settle makes it ready again.
    local holder = flow_join(state, flow_token, expires, limit)
    -- again: the key still has entries this claim had no room for; false once its head is not due.
    local again = holder ~= nil
    while holder and again and state.waiting > 0 do
      local room = math.min(ready_room - #reclaimed - #deleted, share_left(key))
      if room <= 0 or cut == 1 then break end
      local first = flow_queue_first(queue_key, key, room)
      for _, member in ipairs(first) do
        local id, mark = member[1], member[3]
        if not key_has_room(state, redis_now()) then
          -- Over the key's rate limit: its first waiting entry becomes due when the bucket has
          -- room, and the cursor pass takes it then (the key leaves the ready queue meanwhile).
          local at = key_room_at(state)
          saw_due_at(at)
          local not_before = tonumber(redis.call('HGET', defer_key, id))
          if (not_before == nil or not_before > at) and redis.call('XPENDING', stream, group, id, id, 1)[1] then
            redis.call('HSET', defer_key, id, string.format('%d', at))
          end
          again = false
          break
        end
        local row = redis.call('XPENDING', stream, group, id, id, 1)[1]
        local at = row and mark == 'h' and due_at(id, row[4], row[3], tonumber(redis.call('HGET', defer_key, id)))
        if at and at > redis_now() then
          saw_due_at(at)
          again = false
          break
        end
        local entry = row and redis.call('XCLAIM', stream, group, consumer, 0, id)[1]
        if row and entry and not fits(entry_bytes(entry)) then
          redis.call('XCLAIM', stream, group, consumer, 0, id, 'IDLE', row[3], 'RETRYCOUNT', row[4], 'JUSTID')
          cut = 1
          break
        end
        state.waiting = state.waiting - flow_dequeue(queue_key, key, id)
        served[#served + 1] = id
        if entry then
          taken = taken + entry_bytes(entry)
          reclaimed[#reclaimed + 1], counts[#counts + 1], idles[#idles + 1] = entry, row[4] + 1, row[3]
          if not flow_lists_id(holder, 3, id) then holder[#holder + 1] = id end
          count_admitted(key)
          key_take(state, redis_now())
        elseif row and redis.call('XPENDING', stream, group, id, id, 1)[1] == nil then
          deleted[#deleted + 1] = id
        end
      end
      -- A short page emptied the key's queue (a count off by a crash heals here).
      if again and cut == 0 and #first < room then state.waiting = 0 end
    end
    flow_leave_if_empty(state, flow_token)
    -- Stopped by the byte allowance with entries left: the key keeps its place in the queue.
    if not (cut == 1 and again and state.waiting > 0) then
      visited[#visited + 1] = key
      if again and state.waiting > 0 then back[#back + 1] = key end
    end
    flow_store(lease_key, key, state)
  end
  for first = 1, #visited, HASH_CHUNK do
    redis.call('ZREM', ready_key, unpack(visited, first, math.min(first + HASH_CHUNK - 1, #visited)))
  end
  ready_added = flow_ready_add(ready_key, back)
  if #served > 0 then forget_deferrals(served) end
  ready_served = #served
end
-- What the ready keys took beyond their half of the reclaim count comes off the fresh read
-- (and never past the rate limit's room).
local ready_extra = math.max(0, #reclaimed + #deleted - ready_of_reclaim)
if ready_extra > 0 then
  reclaim_limit = reclaim_count + ready_extra
  fresh_count = math.max(0, fresh_count - ready_extra)
  -- The native read beside asks for ARGV[7] entries, more than are left: read here instead.
  if fresh_mode == 'native' then fresh_mode = 'lua' end
end
if rate_room then reclaim_limit = math.min(reclaim_limit, rate_room) end
-- The ready pass's entries lead `reclaimed`, admitted under their leases already.
local ready_taken = #reclaimed

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
  local function page(start, count)
    return redis.pcall('XPENDING', stream, group, start, '+', count)
  end
  -- Pages grow from the count to take (enough when most rows are due: each row read about
  -- once per entry taken) up to the scan bound in all (few due: a handful of calls).
  local scan, size = reclaim_count * 10, reclaim_count
  local rows = page(cursor, size + 1)
  if is_error(rows) and cursor ~= '0-0' then
    if note == '' then note = 'reset' end
    rows = page('0-0', size + 1)
  end
  if is_error(rows) then return rows end
  local has_deferrals = #rows > 0 and redis.call('EXISTS', defer_key) == 1
  local forget, read = {}, 0
  while true do
    -- The clock is read after the rows' idle times (again, if code before read it), so a due
    -- time reported from them is never before the true one.
    now_ms = nil
    local last = math.min(#rows, size)
    local ids = {}
    if has_deferrals then for i = 1, last do ids[i] = rows[i][1] end end
    if judge(rows, last, not_before_of(ids), forget) then break end
    read = read + last
    if #rows <= size then
      next_cursor = '0-0'
      break
    end
    -- Row size + 1 starts the next page: read, not yet judged.
    if read >= scan then
      next_cursor = rows[size + 1][1]
      break
    end
    size = math.min(size * 2, scan - read)
    rows = page(rows[last + 1][1], size + 1)
  end
  forget_deferrals(forget)
  -- Stored only when it moved, and not at all by a Redis over maxmemory that refuses the SET
  -- (OOM, when this claim wrote nothing before it): the next claim then pages from the old
  -- cursor again, which skips nothing. Any other refusal fails the claim, as it always did.
  if note ~= 'wrong_type' and stored ~= next_cursor then
    local set = redis.pcall('SET', cursor_key, next_cursor)
    if is_error(set) and string.find(set.err, 'OOM', 1, true) ~= 1 then return set end
  end
end

-- ---- 2. fresh entries
-- Every group has read the whole stream: nothing unread is of unknown size, the counts may start over.
local function adopt()
  local ok, flat = pcall(redis.call, 'XINFO', 'STREAM', stream)
  if not ok then return false end
  local info = field_map(flat)
  for _, other in ipairs(groups) do
    if other['last-delivered-id'] ~= info['last-generated-id'] then return false end
  end
  local added = info['entries-added']
  if type(added) ~= 'number' then return false end
  redis.call('DEL', large_key)
  -- Every entry counts as 'plain' from here: none is unread, so none needs a record — but a
  -- group created later behind the last id would read entries whose records are gone.
  redis.call('HSET', sizes_key, 'plain', added, 'keyed', 0, 'appended', 0, 'large', 0, 'trimmed', added - redis.call('XLEN', stream), 'keyed_trimmed', 0,
    'recorded_from', padded_id(info['last-generated-id']))
  return true
end

-- What the next `count` fresh entries of this group weigh at most, when that is proven and fits
-- what is left (see header); nil otherwise.
local function proven_bytes(count)
  if mine == nil then return nil end
  local lag, entries_read = mine['lag'], mine['entries-read']
  if type(lag) ~= 'number' or type(entries_read) ~= 'number' or lag < 0 then return adopt() and 0 or nil end
  local counted = redis.call('HMGET', sizes_key, 'plain', 'keyed', 'appended', 'large', 'trimmed', 'keyed_trimmed', 'recorded_from')
  -- Entries up to this (padded) id may have lost their records (adopt, retention.lua): a group
  -- still behind it reads through Lua.
  if counted[7] and padded_id(mine['last-delivered-id']) < counted[7] then return nil end
  local plain, keyed, older = tonumber(counted[1] or '0'), tonumber(counted[2] or '0'), tonumber(counted[3] or '0')
  local large, trimmed, keyed_trimmed = tonumber(counted[4] or '0'), tonumber(counted[5] or '0'), tonumber(counted[6] or '0')
  local appended = plain + keyed + older
  local intact = appended == entries_read + lag and redis.call('XLEN', stream) + trimmed == appended and redis.call('ZCARD', large_key) == large + keyed - keyed_trimmed
  -- With flow leases the admit call needs every unread entry's key record: none by an older writer.
  if intact and flow_token ~= '' and older ~= 0 then intact = false end
  if not intact then return adopt() and 0 or nil end
  local window = math.min(count, lag)
  if window == 0 then return 0 end
  -- Size records only: every one sorts below ':', every key record ('k…') above.
  local records = redis.call('ZRANGEBYLEX', large_key, '(' .. padded_id(mine['last-delivered-id']) .. '~', '(:', 'LIMIT', 0, window)
  local bytes = (window - #records) * SMALL
  for _, record in ipairs(records) do bytes = bytes + tonumber(string.match(record, ' (%d+)$')) end
  if taken + bytes <= allowance or (window == 1 and alone and taken == 0) then return bytes end
  return nil
end

-- XREADGROUP here in one step, for a read proven to fit: nothing can go back, and the reply
-- counts what the entries measure (never more than the proven bound).
local function read_proven(count)
  local read = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count, 'STREAMS', stream, '>')
  if is_error(read) then return read end
  if not read then return {} end
  local got = read[1][2]
  for _, entry in ipairs(got) do taken = taken + entry_bytes(entry) end
  return got
end

-- XREADGROUP here, in steps; what does not fit goes back to the stream for this group (see header).
local function read_here(count)
  local kept, step = {}, 1
  while #kept < count do
    local asked = math.min(step, count - #kept)
    local read = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', asked, 'STREAMS', stream, '>')
    if is_error(read) then return read end
    if not read then break end
    local got = read[1][2]
    local first_back = nil
    for i, entry in ipairs(got) do
      local bytes = entry_bytes(entry)
      if not fits(bytes) then
        first_back = i
        break
      end
      taken = taken + bytes
      kept[#kept + 1] = entry
    end
    if first_back ~= nil then
      cut = 1
      local last = #kept > 0 and kept[#kept][1] or mine['last-delivered-id']
      local back = {}
      for i = first_back, #got do back[#back + 1] = got[i][1] end
      local entries_read = mine['entries-read']
      if type(entries_read) == 'number' then
        entries_read = entries_read + #kept
      else
        -- Unknown before this read (a group created at 0-0 behind a backlog): the reads just
        -- made let Redis count it where it can, and what goes back is subtracted. Left unknown,
        -- every later claim would find it unknown again and never read natively.
        for _, flat in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
          local info = field_map(flat)
          if info['name'] == group and type(info['entries-read']) == 'number' then entries_read = info['entries-read'] - #back end
        end
      end
      local setid = { 'XGROUP', 'SETID', stream, group, last }
      if type(entries_read) == 'number' then setid[6], setid[7] = 'ENTRIESREAD', entries_read end
      redis.call(unpack(setid))
      redis.call('XACK', stream, group, unpack(back))
      break
    end
    if #got < asked then break end
    -- The next step asks for about what the rest of the allowance holds at the size seen so far.
    step = math.max(1, math.floor((allowance - taken) / math.max(1, taken / #kept)))
  end
  return kept
end

local fresh_via, fresh = 'none', {}
-- What the reclaim took counts against the rate limit's room.
if rate_room then fresh_count = math.min(fresh_count, math.max(0, rate_room - #reclaimed)) end
if fresh_mode == 'native' then
  local bound = proven_bytes(fresh_count)
  if bound then
    -- At this group's last-delivered id: the admit call finds there where the read began.
    local opened = redis.pcall('XGROUP', 'CREATE', gate_key, group, mine['last-delivered-id'], 'MKSTREAM')
    if is_error(opened) then return opened end
    taken = taken + bound
    fresh_via = 'native'
  else
    fresh_mode = 'lua'
  end
elseif fresh_mode == 'lua' and fresh_count > 0 and proven_bytes(fresh_count) then
  fresh = read_proven(fresh_count)
  if is_error(fresh) then return fresh end
  fresh_via = 'lua'
end
if fresh_mode == 'lua' and fresh_via == 'none' and fresh_count > 0 then
  -- No such group (or stream): the run creates the group on NOGROUP and claims again.
  if mine == nil then return redis.error_reply('NOGROUP No such key or consumer group for this claim') end
  fresh = read_here(fresh_count)
  if is_error(fresh) then return fresh end
  fresh_via = 'lua'
end

-- ---- 2a. 'admit': the native read's window, from the gate and the key records (see the header)
local window_ids, window_keys, window_records = nil, nil, 0
if admit_mode then
  local gate = redis.pcall('XINFO', 'GROUPS', gate_key)
  -- No gate: the read beside was not proven (the claim read through Lua and admitted there).
  if is_error(gate) or #gate == 0 then return { {}, 0, 0, '', 0 } end
  local first = field_map(gate[1])['last-delivered-id']
  redis.call('DEL', gate_key)
  local last
  for _, flat in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local info = field_map(flat)
    if info['name'] == group then last = info['last-delivered-id'] end
  end
  if last == nil or last == first then return { {}, 0, 0, '', 0 } end
  -- Key records of ids in (first, last]: 'k<padded id> <id> <key>' (lib/record-size.lua).
  local records = redis.call('ZRANGEBYLEX', large_key, '(k' .. padded_id(first) .. '~', '[k' .. padded_id(last) .. '~')
  -- Ids and keys only: section 3 admits the window by id, and no entry table is built for it.
  -- The id runs from byte 44 to the next space, found plain: a pattern match here was an eighth
  -- of the admit call's work.
  window_ids, window_keys, window_records = {}, {}, #records
  for i = 1, #records do
    local record = records[i]
    local space = string.find(record, ' ', 44, true)
    -- Writers leave no other shape; one that is not theirs refuses the admission (the read's entries go back).
    if space == nil or space == 44 then return redis.error_reply('ERR claim: a malformed flow key record') end
    window_ids[i], window_keys[i] = string.sub(record, 44, space - 1), string.sub(record, space + 1)
  end
end

-- ---- 3. flow leases: admit each keyed entry under its key's lease, or park it (see the header)
local parked, parked_fresh, parked_limited = 0, 0, 0
local parked_ids = {}

-- The flow key of each entry ('' = none): the last flow_key field, the value the client reads.
local function flow_keys_of(entries)
  local keys = {}
  for i, entry in ipairs(entries) do
    local fields, key = entry[2], ''
    for f = 1, #fields - 1, 2 do
      if fields[f] == 'flow_key' then key = fields[f + 1] end
    end
    keys[i] = key
  end
  return keys
end

if flow_token ~= '' and (#reclaimed > 0 or #fresh > 0 or window_records > 0) then
  local now, expires, limit = redis_now(), redis_now() + tonumber(ARGV[16]), tonumber(ARGV[17])
  local reclaimed_keys, fresh_keys = flow_keys_of(reclaimed), window_keys or flow_keys_of(fresh)
  local states, touched = {}, {}
  for _, keys in ipairs({ reclaimed_keys, fresh_keys }) do
    for i = 1, #keys do
      local key = keys[i]
      if key ~= '' and not states[key] then
        states[key] = true
        touched[#touched + 1] = key
      end
    end
  end
  for first = 1, #touched, HASH_CHUNK do
    local last = math.min(first + HASH_CHUNK - 1, #touched)
    local values = redis.call('HMGET', lease_key, unpack(touched, first, last))
    for i = first, last do
      -- A key with no lease value (nothing holds it or waits on it) is opened only if admit needs it.
      local value = values[i - first + 1]
      states[touched[i]] = value and flow_open(value, now, flow_token, flow_strict, stream, group, queue_key, touched[i])
    end
  end
  -- A free key's first entry, admitted without a state table (most keys, by far): its lease
  -- value for this run's new holder, written as flow_pack_state writes [[ [token, expires, id] ], 0].
  local packed_holder = string.char(0x92, 0x91, 0x93) .. flow_pack_once(flow_token) .. flow_pack_once(expires)
  -- The id of a lease value admitted by its bytes: its MessagePack str after the holder's bytes.
  local id_from = #packed_holder + 2
  local plain_free = not rate_per_key and limit >= 1 and flow_share == 0
  local function admit_free(id, key)
    if rate_per_key or limit < 1 or share_left(key) <= 0 then return false end
    states[key] = packed_holder .. flow_pack_id(id) .. '\0'
    count_admitted(key)
    return true
  end
  -- The state table of a key admit_free left as a lease value (or never opened), when another entry of it comes.
  local function state_of(key)
    local prior = states[key]
    if type(prior) == 'table' then return prior end
    local state = flow_open(nil, now, flow_token, flow_strict, stream, group, queue_key, key)
    if prior then
      -- An id of 32 bytes or more has a str8 tag, one byte longer.
      local tag = string.byte(prior, id_from - 1)
      flow_join(state, flow_token, expires, limit)[3] = string.sub(prior, tag == 0xd9 and id_from + 1 or id_from, -2)
    end
    states[key] = state
    return state
  end
  -- The padded id of the key's first waiting entry (looked up once, then kept current); nil when none.
  local function head_of(state, key)
    if state.waiting > 0 and state.head == nil then
      local first = flow_queue_first(queue_key, key, 1)[1]
      if first then state.head = first[2] else state.waiting = 0 end
    end
    return state.waiting > 0 and state.head or nil
  end
  local not_before, ready, is_ready = {}, {}, {}
  -- The MessagePack tag of a fixstr id by its length (ids of one run are mostly of one length).
  local fixstr_tags = {}
  -- Admits `id` under `key`'s lease (true), or parks it in the key's queue with a not-before (false).
  local function admit(id, key)
    if states[key] == false then
      -- Without a share or a key's rate limit, admit_free inlined (a fixstr id: below 32 bytes).
      local n = #id
      if plain_free and n < 32 then
        local tag = fixstr_tags[n]
        if tag == nil then
          tag = string.char(0xa0 + n)
          fixstr_tags[n] = tag
        end
        states[key] = packed_holder .. tag .. id .. '\0'
        return true
      end
      if admit_free(id, key) then return true end
    end
    local state = state_of(key)
    local head = head_of(state, key)
    -- The padded id only when the key's queue holds entries (most keys' never does).
    local padded = head and padded_id(id)
    local behind = head ~= nil and head < padded
    local over_share = share_left(key) <= 0
    local limited = not behind and not over_share and not key_has_room(state, now)
    local holder = not behind and not over_share and not limited and flow_join(state, flow_token, expires, limit)
    if holder then
      if not flow_lists_id(holder, 3, id) then holder[#holder + 1] = id end
      count_admitted(key)
      key_take(state, now)
      if head ~= nil and head == padded then
        state.waiting, state.head = state.waiting - flow_dequeue(queue_key, key, id), nil
      end
      return true
    end
    state.waiting = state.waiting + flow_enqueue(queue_key, key, id, 'p')
    padded = padded or padded_id(id)
    if head == nil or padded < head then state.head = padded end
    -- Behind its queue, or over the share, while a slot is free (or this run's): the queue is
    -- served from the ready queue.
    if (behind or over_share) and (#state.holders < limit or flow_holder_of(state.holders, flow_token)) and not is_ready[key] then
      is_ready[key] = true
      ready[#ready + 1] = key
    end
    -- Over the key's rate limit: due when its bucket has room (then the cursor pass takes it).
    local due = limited and key_room_at(state) or flow_free_at(state) or expires
    if limited then saw_due_at(due) end
    -- Waiting on a limit: its key's bucket (or a handler's hold) has no room, whether this entry
    -- reached the key's front or queued behind an entry that did.
    if limited or not key_has_room(state, now) then parked_limited = parked_limited + 1 end
    not_before[#not_before + 1] = id
    not_before[#not_before + 1] = string.format('%d', due)
    return false
  end
  local kept, kept_counts, kept_idles = {}, {}, {}
  for i, entry in ipairs(reclaimed) do
    local key = reclaimed_keys[i]
    if i <= ready_taken or key == '' or admit(entry[1], key) then
      kept[#kept + 1], kept_counts[#kept_counts + 1], kept_idles[#kept_idles + 1] = entry, counts[i], idles[i]
    else
      -- As if never claimed: the count before this claim, due as soon as nothing defers it.
      redis.call('XCLAIM', stream, group, consumer, 0, entry[1], 'IDLE', math.max(min_idle_ms, idles[i]), 'RETRYCOUNT', counts[i] - 1, 'JUSTID')
      taken = taken - entry_bytes(entry)
      parked = parked + 1
    end
  end
  reclaimed, counts, idles = kept, kept_counts, kept_idles
  if window_ids then
    for i = 1, #window_ids do
      local id, key = window_ids[i], window_keys[i]
      if key ~= '' and not admit(id, key) then parked_ids[#parked_ids + 1] = id end
    end
  else
    local kept_fresh = {}
    for i, entry in ipairs(fresh) do
      if fresh_keys[i] == '' or admit(entry[1], fresh_keys[i]) then
        kept_fresh[#kept_fresh + 1] = entry
      else
        parked_ids[#parked_ids + 1] = entry[1]
        taken = taken - entry_bytes(entry)
      end
    end
    fresh = kept_fresh
  end
  parked_fresh, parked = #parked_ids, parked + #parked_ids
  -- Fresh ones had no delivery before this claim: count 0, due once nothing defers them.
  for first = 1, #parked_ids, HASH_CHUNK do
    local put_back = { 'XCLAIM', stream, group, consumer, 0 }
    for i = first, math.min(first + HASH_CHUNK - 1, #parked_ids) do put_back[#put_back + 1] = parked_ids[i] end
    for _, word in ipairs({ 'IDLE', min_idle_ms, 'RETRYCOUNT', 0, 'JUSTID' }) do put_back[#put_back + 1] = word end
    redis.call(unpack(put_back))
  end
  for first = 1, #not_before, 2 * HASH_CHUNK do
    redis.call('HSET', defer_key, unpack(not_before, first, math.min(first + 2 * HASH_CHUNK - 1, #not_before)))
  end
  ready_added = ready_added + flow_ready_add(ready_key, ready)
  flow_store_all(lease_key, touched, states)
end

-- ---- rate limit: what this claim admits advances TAT (see the header)
if rate_room then
  local admitted = #reclaimed + #fresh
  if admitted > 0 then
    rate_tat = rate_tat + admitted * rate_interval
    -- Kept until TAT passes (the reclaim reads the clock again: now may be past TAT by then; a
    -- bucket whose TAT has passed is full either way).
    redis.call('SET', rate_key, string.format('%.17g', rate_tat), 'PX', math.max(1, math.ceil(rate_tat - redis_now()) + 1))
  end
  if admitted >= rate_room then saw_due_at(math.ceil(rate_tat - rate_tolerance)) end
end

-- Keys left ready for the next claim, when this one served or added some (a drain goes on).
local ready_more = 0
if ready_served + ready_added > 0 and redis.call('ZCARD', ready_key) > 0 then ready_more = 1 end
if admit_mode then return { parked_ids, parked_limited, ready_more, next_due or '', window_records } end

return {
  next_cursor, reclaimed, deleted, counts, note, fresh_via, fresh, cut, taken, next_due or '', now_ms or '', idles, moved,
  parked, parked_fresh, rate_limited, fresh_via == 'none' and 0 or fresh_count, ready_more, parked_limited,
}
