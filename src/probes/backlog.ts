/**
 * Backlog probe (SPEC §8): how far one group is behind, in one round trip.
 *
 * The oldest pending age is measured from the entry id (when the entry was appended),
 * not from PEL idle time: idle resets on every redelivery, so an entry redelivered over and
 * over (a poison pill) would look young forever. Ages use the Redis clock (TIME, sent in
 * the same round trip), the clock that assigned the ids. The stream's scheduled events
 * (SPEC §5.6) are counted in the same round trip, with the earliest due time.
 *
 * The next due time (SPEC §5.6), when the target names the consumer's retry policy, is read
 * from a sample: the DUE_SAMPLE oldest pending entries, judged as claim.lua judges them (its
 * twin in retry.ts; display only, nothing is taken). A deferral hash that exists costs a second
 * round trip (its not-before times of the sampled ids); without one the probe stays one.
 *
 * Flow control (SPEC §5.7), when the target names the group's lease hash: in the same round
 * trip, how many keys are leased or waited on, how many entries wait in the keys' queues and
 * how many keys are ready, and from the first FLOW_SAMPLE queue members (id order per key, in
 * key order): the keys closed behind a head (strict order) with the head's id and age, and the
 * busiest keys of the sample.
 *
 * Entries waiting on a limit (SPEC §5.7), when the target names the consumer's rate limit: a
 * group-wide limit's bucket is read in the first round trip (when it next has room); with a
 * per-key limit, the lease states of the sampled keys are read in the second (beside the
 * deferrals), and a key whose bucket or handler's hold has no room counts its sampled entries
 * as waiting on a limit.
 */
import { entryIdMillis } from '../entry/entry';
import { ReplyShapeError } from '../ground/errors';
import { deriveStreamKeys } from '../entry/keys';
import { command, type RedisPort, type RedisReply } from '../redis/port';
import { decodeText, isWellFormedUtf8, surrogateEscapedText } from '../ground/text';
import { asArray, asInteger, asText, isBytes } from '../redis/reply';
import { runOperations } from '../redis/script';
import { scheduleKeys } from '../entry/schedule-keys';
import { dueAtMs, type RetryPolicy } from '../consume/retry';
import { flowQueueKey, flowRateKey, flowReadyKey } from '../entry/keys';
import { leaseTimes, parseQueueMember } from '../consume/flow-lease';

/** Queue members the flow part reads (closed and busiest keys come from them). */
export const FLOW_SAMPLE = 200;
/** Busiest keys reported. */
const BUSIEST = 5;

/** Pending entries, oldest first, the next due time is computed from: bounded work per probe. */
export const DUE_SAMPLE = 100;

/** What the probe needs to tell when pending entries are due: the consumer's config. */
export interface DueTarget {
  readonly minIdleMs: number;
  readonly retry: RetryPolicy;
  /** The consumer's deferral hash (keys.defer). */
  readonly deferKey: string;
}

export interface BacklogTarget {
  readonly stream: string;
  readonly group: string;
  /** Default: the stream's derived DLT name. */
  readonly dlt?: string;
  /** The consumer's retry policy: the probe then reports the next due time (nextDueAt). */
  readonly due?: DueTarget;
  /** The group's flow lease hash (keys.flowLease): the probe then reports `flow`. */
  readonly flowLease?: string;
  /** A closed key whose head is older than this is counted in `flow.closedOverAge` (config flow.closedAlertMs). */
  readonly flowClosedAlertMs?: number;
  /**
   * The consumer's rate limit (config rateLimit, with flowLease): its burst tolerance as the
   * claim script applies it (rateSpacing), and whether each flow key has its own bucket.
   */
  readonly rateLimit?: { readonly toleranceMs: number; readonly perKey: boolean };
}

/** A key's entries waiting in its queue (SPEC §5.7). */
export interface FlowKeyState {
  /** The key's bytes as text (UTF-8, replacement characters where they are not). */
  readonly key: string;
  /** Its first waiting entry. */
  readonly headId: string;
  /** Redis now minus the head's id time, ms. */
  readonly headAgeMs: number;
  /** Its entries in the sample. */
  readonly waiting: number;
}

/** A key whose own rate limit or a handler's hold (retryAfterMs) lets none of its entries start yet. */
export interface FlowLimitedKey extends FlowKeyState {
  /** When it next has room, ms from the probe (Redis clock). */
  readonly roomInMs: number;
}

export interface FlowBacklog {
  /** Keys leased or waited on (fields of the lease hash). */
  readonly keys: number;
  /** Entries waiting in the keys' queues (parked behind a busy key, or heads and what follows them). */
  readonly waiting: number;
  /** Keys whose slot is free while entries wait: the next claim serves them first. */
  readonly readyKeys: number;
  /** Keys closed behind a head (strict order: a retained or unsettled earliest entry), from the sample. */
  readonly closedKeys: readonly FlowKeyState[];
  /** Of those, keys whose head is older than the target's flowClosedAlertMs (0 without one): stuck, like a stuck saga. */
  readonly closedOverAge: number;
  /** The keys with the most waiting entries in the sample, most first. */
  readonly busiestKeys: readonly FlowKeyState[];
  /** Sampled keys waiting on their own rate limit or a hold (per-key rate limit only), soonest room first. */
  readonly limitedKeys: readonly FlowLimitedKey[];
  /** Their entries in the sample: waiting on a limit, not on a busy key or their turn. */
  readonly waitingOnLimit: number;
}

export interface Backlog {
  /** Entries delivered to the group and not yet acked (XPENDING count). */
  readonly pending: number;
  readonly oldestPendingId: string | undefined;
  /** Redis now minus the oldest pending entry's id time, ms (never negative). */
  readonly oldestPendingAgeMs: number | undefined;
  /** Deliveries of the oldest pending entry: a high number here is a poison pill. */
  readonly oldestPendingDeliveries: number | undefined;
  readonly consumers: number;
  /** Entries not yet delivered to the group; null when Redis cannot tell (XINFO lag nil). */
  readonly lag: number | null;
  readonly lastDeliveredId: string;
  readonly streamLength: number;
  /** Records in the stream's dead-letter stream. */
  readonly deadLetters: number;
  /** Events in the stream's schedule, not yet moved into it (SPEC §5.6). */
  readonly scheduled: number;
  /** Due time (ms epoch, Redis clock) of the earliest of them; undefined when none. */
  readonly scheduledNextDueAt: number | undefined;
  /** Redis time of the probe, ms epoch. */
  readonly observedAtMs: number;
  /**
   * The earliest time (Redis ms epoch) one of the DUE_SAMPLE oldest pending entries becomes
   * due for redelivery — its retry backoff, its deferral, or minIdle for one still in a
   * handler's hands — among those not due yet; absent when none (or no `due` target).
   */
  readonly nextDueAt?: number;
  /** nextDueAt minus observedAtMs. */
  readonly nextDueInMs?: number;
  /** Sampled pending entries already due and waiting for a poll to reclaim them. */
  readonly dueNow?: number;
  /** Flow control's state (with `flowLease` in the target). */
  readonly flow?: FlowBacklog;
  /**
   * A group-wide rate limit (target rateLimit, not per key): ms until its bucket has room for
   * the next start, 0 when it has room now. Entries waiting meanwhile are the lag and the due.
   */
  readonly rateLimitRoomInMs?: number;
}

/** Throws (NOGROUP) when the group does not exist; readiness reports that case. */
export async function probeBacklog(port: RedisPort, target: BacklogTarget): Promise<Backlog> {
  const { stream, group } = target;
  const dlt = target.dlt ?? deriveStreamKeys(stream, group).dlt;
  const schedule = scheduleKeys(stream).due;
  const rateCommands = groupRateCommands(target);
  const replies = await runOperations(port, [
    command('XPENDING', stream, group),
    command('XPENDING', stream, group, '-', '+', target.due === undefined ? 1 : DUE_SAMPLE),
    command('XINFO', 'GROUPS', stream),
    command('XLEN', stream),
    command('XLEN', dlt),
    command('TIME'),
    command('ZCARD', schedule),
    command('ZRANGE', schedule, 0, 0, 'WITHSCORES'),
    ...(target.due === undefined ? [] : [command('EXISTS', target.due.deferKey)]),
    ...flowCommands(target.flowLease),
    ...rateCommands,
  ]);
  const [summary, oldestRows, groups, streamLength, dltLength, time, scheduled, head] = replies;
  const deferrals = target.due === undefined ? undefined : replies[8];
  const flowReplies = replies.slice(target.due === undefined ? 8 : 9, replies.length - rateCommands.length);
  const groupRate = rateCommands.length === 0 ? undefined : replies[replies.length - 1];
  const scheduleHead = asArray(head, 'schedule head')[1];
  const info = groupInfo(groups, group);
  const [seconds, micros] = asArray(time, 'TIME reply');
  const observedAtMs = asInteger(seconds, 'TIME seconds') * 1000 + Math.floor(asInteger(micros, 'TIME micros') / 1000);
  const [oldest] = asArray(oldestRows, 'XPENDING rows');
  const oldestRow = oldest === undefined ? undefined : asArray(oldest, 'XPENDING row');
  const oldestPendingId = oldestRow === undefined ? undefined : asText(oldestRow[0], 'pending id');
  const oldestMs = oldestPendingId === undefined ? undefined : entryIdMillis(oldestPendingId);
  const [due, flow] = await Promise.all([
    target.due === undefined ? {} : nextDue(port, target.due, asArray(oldestRows, 'XPENDING rows'), observedAtMs, asInteger(deferrals, 'EXISTS reply') === 1),
    target.flowLease === undefined ? undefined : flowBacklog(port, target.flowLease, flowReplies, observedAtMs, target),
  ]);
  return {
    pending: asInteger(asArray(summary, 'XPENDING summary')[0], 'pending count'),
    oldestPendingId,
    oldestPendingAgeMs: oldestMs === undefined ? undefined : Math.max(0, observedAtMs - oldestMs),
    oldestPendingDeliveries: oldestRow === undefined ? undefined : asInteger(oldestRow[3], 'pending deliveries'),
    consumers: asInteger(info.get('consumers'), 'group consumers'),
    lag: info.get('lag') == null ? null : asInteger(info.get('lag'), 'group lag'),
    lastDeliveredId: asText(info.get('last-delivered-id'), 'group last-delivered-id'),
    streamLength: asInteger(streamLength, 'stream length'),
    deadLetters: asInteger(dltLength, 'DLT length'),
    scheduled: asInteger(scheduled, 'schedule size'),
    scheduledNextDueAt: scheduleHead === undefined ? undefined : asInteger(scheduleHead, 'schedule next due'),
    observedAtMs,
    ...due,
    ...(flow === undefined ? {} : { flow }),
    ...(groupRate === undefined ? {} : { rateLimitRoomInMs: groupRateRoomInMs(groupRate, observedAtMs, target.rateLimit!.toleranceMs) }),
  };
}

/** GET of the group's bucket when the target names a group-wide rate limit (and the lease hash it is named after). */
function groupRateCommands(target: BacklogTarget) {
  if (target.flowLease === undefined || target.rateLimit === undefined || target.rateLimit.perKey) return [];
  return [command('GET', flowRateKey(target.flowLease))];
}

/** ms until the bucket of TAT `reply` (absent: empty) has room: claim.lua lets a start in while TAT − now ≤ tolerance. */
function groupRateRoomInMs(reply: RedisReply | undefined, observedAtMs: number, toleranceMs: number): number {
  const tat = isBytes(reply) ? Number(decodeText(reply)) : 0;
  return Number.isFinite(tat) ? Math.max(0, Math.ceil(tat - toleranceMs) - observedAtMs) : 0;
}

function flowCommands(lease: string | undefined) {
  if (lease === undefined) return [];
  const queue = flowQueueKey(lease);
  // HEXISTS: the hash's field '' is no key (lua/lib/flow-lease.lua keeps its encoding with it).
  return [command('HLEN', lease), command('HEXISTS', lease, ''), command('ZCARD', queue), command('ZCARD', flowReadyKey(lease)), command('ZRANGE', queue, 0, FLOW_SAMPLE - 1)];
}

interface SampledKey {
  readonly bytes: Uint8Array;
  readonly head: { readonly id: string; readonly mark: 'p' | 'h' };
  waiting: number;
}

/** The sample's keys, in key order, each with its first member (its head) and its members counted. */
function sampledKeys(sample: RedisReply | undefined): SampledKey[] {
  // By the key's bytes (escaped reversibly), so two keys whose bytes are not UTF-8 stay two.
  const byKey = new Map<string, SampledKey>();
  for (const member of asArray(sample, 'flow queue sample')) {
    if (!isBytes(member)) continue;
    const parsed = parseQueueMember(member);
    if (parsed === undefined) continue;
    const name = surrogateEscapedText(parsed.key);
    const seen = byKey.get(name);
    if (seen === undefined) byKey.set(name, { bytes: parsed.key, head: parsed, waiting: 1 });
    else seen.waiting += 1;
  }
  return [...byKey.values()];
}

async function flowBacklog(port: RedisPort, lease: string, [fields, encodingField, waiting, ready, sample]: RedisReply[], observedAtMs: number, target: BacklogTarget): Promise<FlowBacklog> {
  const keys = sampledKeys(sample);
  const state = ({ bytes, head, waiting: count }: SampledKey): FlowKeyState => ({
    key: decodeText(bytes),
    headId: head.id,
    headAgeMs: Math.max(0, observedAtMs - (entryIdMillis(head.id) ?? observedAtMs)),
    waiting: count,
  });
  const closedKeys = keys.filter((k) => k.head.mark === 'h').map(state);
  const closedAlertMs = target.flowClosedAlertMs;
  const perKeyTolerance = target.rateLimit?.perKey === true ? target.rateLimit.toleranceMs : undefined;
  const limitedKeys = perKeyTolerance === undefined ? [] : await limitedOf(port, lease, keys, observedAtMs, perKeyTolerance, state);
  return {
    keys: asInteger(fields, 'HLEN reply') - asInteger(encodingField, 'HEXISTS reply'),
    waiting: asInteger(waiting, 'ZCARD reply'),
    readyKeys: asInteger(ready, 'ZCARD reply'),
    closedKeys,
    closedOverAge: closedAlertMs === undefined ? 0 : closedKeys.filter((k) => k.headAgeMs > closedAlertMs).length,
    busiestKeys: keys
      .map(state)
      .sort((a, b) => b.waiting - a.waiting)
      .slice(0, BUSIEST),
    limitedKeys,
    waitingOnLimit: limitedKeys.reduce((sum, k) => sum + k.waiting, 0),
  };
}

/**
 * The sampled keys whose bucket or hold has no room now, soonest room first: their lease
 * states in one HMGET, judged as claim.lua's key_has_room judges them.
 */
async function limitedOf(port: RedisPort, lease: string, sampled: readonly SampledKey[], observedAtMs: number, toleranceMs: number, state: (key: SampledKey) => FlowKeyState): Promise<FlowLimitedKey[]> {
  // REST carries arguments as JSON text: a key whose bytes are not UTF-8 cannot be named there
  // (its entries still count as waiting; it is only not judged).
  const keys = port.transport === 'rest' ? sampled.filter((k) => isWellFormedUtf8(k.bytes)) : sampled;
  if (keys.length === 0) return [];
  const [values] = await runOperations(port, [command('HMGET', lease, ...keys.map((k) => k.bytes))]);
  const limited: FlowLimitedKey[] = [];
  asArray(values, 'HMGET reply').forEach((value, i) => {
    if (!isBytes(value)) return;
    const { tat, hold } = leaseTimes(value);
    const roomAt = Math.max(hold, Math.ceil(tat - toleranceMs));
    if (roomAt > observedAtMs) limited.push({ ...state(keys[i]!), roomInMs: roomAt - observedAtMs });
  });
  return limited.sort((a, b) => a.roomInMs - b.roomInMs);
}

/** The sample's next due time, and how many of it are due already. */
async function nextDue(port: RedisPort, due: DueTarget, rows: RedisReply[], observedAtMs: number, deferrals: boolean): Promise<Pick<Backlog, 'nextDueAt' | 'nextDueInMs' | 'dueNow'>> {
  const sample = rows.map((row) => {
    const [id, , idle, deliveries] = asArray(row, 'XPENDING row');
    return { id: asText(id, 'pending id'), idleMs: asInteger(idle, 'pending idle'), deliveries: asInteger(deliveries, 'pending deliveries') };
  });
  let notBefore: RedisReply[] = [];
  if (deferrals && sample.length > 0) {
    const [values] = await runOperations(port, [command('HMGET', due.deferKey, ...sample.map((row) => row.id))]);
    notBefore = asArray(values, 'HMGET reply');
  }
  let nextDueAt: number | undefined;
  let dueNow = 0;
  sample.forEach((row, i) => {
    const deferredUntil = notBefore[i];
    const at = dueAtMs(due.retry, due.minIdleMs, row, observedAtMs, deferredUntil == null ? undefined : asInteger(deferredUntil, 'not-before'));
    if (at <= observedAtMs) dueNow += 1;
    else if (nextDueAt === undefined || at < nextDueAt) nextDueAt = at;
  });
  return nextDueAt === undefined ? { dueNow } : { nextDueAt, nextDueInMs: nextDueAt - observedAtMs, dueNow };
}

/** The XINFO GROUPS entry of `group`, as a field → value map. */
function groupInfo(reply: RedisReply | undefined, group: string): Map<string, RedisReply> {
  for (const item of asArray(reply, 'XINFO GROUPS')) {
    const info = flatMap(asArray(item, 'XINFO group'));
    const name = info.get('name');
    if (isBytes(name) && decodeText(name) === group) return info;
  }
  throw new ReplyShapeError(`XINFO GROUPS has no entry for the probed group`);
}

function flatMap(flat: RedisReply[]): Map<string, RedisReply> {
  const map = new Map<string, RedisReply>();
  for (let i = 0; i + 1 < flat.length; i += 2) map.set(asText(flat[i], 'XINFO field'), flat[i + 1]!);
  return map;
}
