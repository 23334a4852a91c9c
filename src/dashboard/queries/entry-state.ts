/**
 * Where one source entry is now, for each consumer group of its stream:
 * - `pending` — in the group's PEL (XPENDING with the id as both bounds): consumer, idle
 *   time, delivery count;
 * - `dead_lettered` — a DLT record of that group names the entry (its reason shown), or
 *   only the group's marker says so (the record lies beyond what was scanned);
 * - `acked` — delivered (id ≤ the group's last-delivered-id), not pending, no dead-letter
 *   marker or record found;
 * - `not_delivered` — after the group's last-delivered-id: no run has read it yet.
 * Settle writes the record, the marker and the XACK in one script, so an entry is never
 * both pending and dead-lettered by the same group.
 */
import { errorCode } from '../../ground/errors';
import type { StreamKeys } from '../../entry/keys';
import { markerKeyFor } from '../../entry/marker-key';
import { command, type RedisPort, type RedisReply } from '../../redis/port';
import { decodeText } from '../../ground/text';
import { asArray, asInteger, asText, isBytes } from '../../redis/reply';
import { runOperations, runOperationsSettled, throwIfError } from '../../redis/script';
import type { DeadLetterRecord } from '../../redrive/record';

export interface GroupCursor {
  readonly group: string;
  readonly lastDeliveredId: string;
}

export type GroupState =
  | { readonly group: string; readonly state: 'pending'; readonly consumer: string; readonly idleMs: number; readonly deliveries: number }
  | { readonly group: string; readonly state: 'dead_lettered'; readonly reason: string | undefined; readonly dltId: string | undefined }
  | { readonly group: string; readonly state: 'acked' }
  | { readonly group: string; readonly state: 'not_delivered' };

/** Negative, zero or positive as entry id `a` sorts before, with or after `b`. */
export function compareEntryIds(a: string, b: string): number {
  const [am = 0n, as = 0n] = a.split('-').map((part) => BigInt(part));
  const [bm = 0n, bs = 0n] = b.split('-').map((part) => BigInt(part));
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}

function fieldMap(flat: RedisReply[]): Map<string, RedisReply> {
  const map = new Map<string, RedisReply>();
  for (let i = 0; i + 1 < flat.length; i += 2) if (isBytes(flat[i])) map.set(decodeText(flat[i] as Uint8Array), flat[i + 1]!);
  return map;
}

/** Parses an XINFO GROUPS reply; a stream that does not exist has no groups. */
export function groupCursors(reply: RedisReply | Error): GroupCursor[] {
  if (reply instanceof Error) {
    if (errorCode(reply) === 'REDIS_COMMAND_FAILED' && /no such key/i.test(reply.message)) return [];
    throw reply;
  }
  return asArray(reply, 'XINFO GROUPS').map((item) => {
    const info = fieldMap(asArray(item, 'XINFO group'));
    return { group: asText(info.get('name'), 'group name'), lastDeliveredId: asText(info.get('last-delivered-id'), 'last-delivered-id') };
  });
}

export async function readGroupCursors(port: RedisPort, stream: string): Promise<GroupCursor[]> {
  const [reply] = await runOperationsSettled(port, [command('XINFO', 'GROUPS', stream)]);
  return groupCursors(reply!);
}

/**
 * The state of each entry for each group, in one round trip (an XPENDING and an EXISTS of
 * the marker per entry and group). `deadLetters` are the DLT records already read for these
 * entries; they give the reason where a marker alone could not.
 */
export async function entryStates(
  port: RedisPort,
  keys: Pick<StreamKeys, 'stream' | 'markerPrefix'>,
  groups: readonly GroupCursor[],
  entryIds: readonly string[],
  deadLetters: readonly DeadLetterRecord[],
): Promise<Map<string, GroupState[]>> {
  const states = new Map<string, GroupState[]>(entryIds.map((id) => [id, []]));
  if (groups.length === 0 || entryIds.length === 0) return states;
  const pairs = entryIds.flatMap((id) => groups.map((g) => ({ id, cursor: g })));
  const replies = await runOperations(
    port,
    pairs.flatMap(({ id, cursor }) => [
      command('XPENDING', keys.stream, cursor.group, id, id, 1),
      command('EXISTS', markerKeyFor(keys, cursor.group, id)),
    ]),
  );
  pairs.forEach(({ id, cursor }, i) => {
    const [row] = asArray(throwIfError(replies[2 * i]!), 'XPENDING rows');
    const marked = asInteger(replies[2 * i + 1], 'EXISTS reply') === 1;
    const record = deadLetters.find((r) => r.sourceEntryId === id && r.group === cursor.group);
    states.get(id)!.push(stateOf(cursor, id, row, marked, record));
  });
  return states;
}

function stateOf(cursor: GroupCursor, id: string, row: RedisReply | undefined, marked: boolean, record: DeadLetterRecord | undefined): GroupState {
  const group = cursor.group;
  if (row !== undefined) {
    const [, consumer, idle, deliveries] = asArray(row, 'XPENDING row');
    return { group, state: 'pending', consumer: asText(consumer, 'pending consumer'), idleMs: asInteger(idle, 'idle'), deliveries: asInteger(deliveries, 'deliveries') };
  }
  if (record !== undefined || marked) return { group, state: 'dead_lettered', reason: record?.reason, dltId: record?.id };
  return compareEntryIds(id, cursor.lastDeliveredId) <= 0 ? { group, state: 'acked' } : { group, state: 'not_delivered' };
}
