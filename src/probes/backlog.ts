/**
 * Backlog probe (SPEC §8): how far one group is behind, in one round trip.
 *
 * The oldest pending age is measured from the entry id (when the entry was appended),
 * not from PEL idle time: idle resets on every redelivery, so an entry redelivered over and
 * over (a poison pill) would look young forever. Ages use the Redis clock (TIME, sent in
 * the same round trip), the clock that assigned the ids. The stream's scheduled events
 * (SPEC §5.6) are counted in the same round trip, with the earliest due time.
 */
import { entryIdMillis } from '../entry/entry';
import { ReplyShapeError } from '../ground/errors';
import { deriveStreamKeys } from '../entry/keys';
import { command, type RedisPort, type RedisReply } from '../redis/port';
import { decodeText } from '../ground/text';
import { asArray, asInteger, asText, isBytes } from '../redis/reply';
import { runOperations } from '../redis/script';
import { scheduleKeys } from '../schedule/keys';

export interface BacklogTarget {
  readonly stream: string;
  readonly group: string;
  /** Default: the stream's derived DLT name. */
  readonly dlt?: string;
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
  readonly nextDueMs: number | undefined;
  /** Redis time of the probe, ms epoch. */
  readonly observedAtMs: number;
}

/** Throws (NOGROUP) when the group does not exist; readiness reports that case. */
export async function probeBacklog(port: RedisPort, target: BacklogTarget): Promise<Backlog> {
  const { stream, group } = target;
  const dlt = target.dlt ?? deriveStreamKeys(stream, group).dlt;
  const schedule = scheduleKeys(stream).due;
  const [summary, oldestRows, groups, streamLength, dltLength, time, scheduled, head] = await runOperations(port, [
    command('XPENDING', stream, group),
    command('XPENDING', stream, group, '-', '+', 1),
    command('XINFO', 'GROUPS', stream),
    command('XLEN', stream),
    command('XLEN', dlt),
    command('TIME'),
    command('ZCARD', schedule),
    command('ZRANGE', schedule, 0, 0, 'WITHSCORES'),
  ]);
  const nextDue = asArray(head, 'schedule head')[1];
  const info = groupInfo(groups, group);
  const [seconds, micros] = asArray(time, 'TIME reply');
  const observedAtMs = asInteger(seconds, 'TIME seconds') * 1000 + Math.floor(asInteger(micros, 'TIME micros') / 1000);
  const [oldest] = asArray(oldestRows, 'XPENDING rows');
  const oldestRow = oldest === undefined ? undefined : asArray(oldest, 'XPENDING row');
  const oldestPendingId = oldestRow === undefined ? undefined : asText(oldestRow[0], 'pending id');
  const oldestMs = oldestPendingId === undefined ? undefined : entryIdMillis(oldestPendingId);
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
    nextDueMs: nextDue === undefined ? undefined : asInteger(nextDue, 'schedule next due'),
    observedAtMs,
  };
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
