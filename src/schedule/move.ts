/**
 * The move on its own (lua/schedule-move.lua): due scheduled events of one stream appended
 * to it, at most `maxMoved` per call, never before their due time by the Redis clock, each
 * at most once. Poll runs and the trim run include the same Lua fragment in their own
 * scripts; this wrapper serves the CLI, operators and tests.
 */
import { sizeKeys } from '../entry/size-keys';
import type { RedisPort, RedisReply } from '../redis/port';
import { asArray, asInteger } from '../redis/reply';
import { runScript } from '../redis/script';
import { scheduleMoveScript } from '../generated/lua-scripts';
import { scheduleKeys } from '../entry/schedule-keys';
import { assertSchedulable } from './keys';

/** Default most events one move call appends: a bounded script, however large the due backlog. */
export const DEFAULT_MAX_MOVED = 100;
/** Largest `maxMoved`: one call stays a short script. */
export const MAX_MAX_MOVED = 10_000;
/** Default packed bytes after which one call stops moving (one larger event moves alone). */
export const DEFAULT_MOVE_MAX_BYTES = 4 * 1024 * 1024;

export interface MoveResult {
  /** Events appended to the stream by this call. */
  readonly moved: number;
  /** Due time (ms epoch, Redis clock) of the earliest event still scheduled; undefined when none. */
  readonly nextDueMs: number | undefined;
  /** Schedule index entries removed because their fields were missing or unreadable (another hand's doing). */
  readonly dropped: number;
}

export async function moveDueEvents(port: RedisPort, stream: string, options: { readonly maxMoved?: number; readonly maxBytes?: number } = {}): Promise<MoveResult> {
  const maxMoved = options.maxMoved ?? DEFAULT_MAX_MOVED;
  if (!Number.isSafeInteger(maxMoved) || maxMoved < 0 || maxMoved > MAX_MAX_MOVED) {
    throw new RangeError(`maxMoved must be an integer in 0..=${MAX_MAX_MOVED}`);
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MOVE_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) throw new RangeError('maxBytes must be an integer >= 1');
  assertSchedulable(stream, port.cluster);
  const schedule = scheduleKeys(stream);
  const sizes = sizeKeys(stream);
  const reply = await runScript(port, {
    script: scheduleMoveScript,
    keys: [stream, schedule.due, schedule.entries, sizes.counts, sizes.large],
    args: [maxMoved, maxBytes],
  });
  return moveResultOf(reply);
}

/** The fragment's answer `{moved, next_due, dropped}` (lib/schedule-move.lua), in whichever script ran it. */
export function moveResultOf(reply: RedisReply): MoveResult {
  const [moved, nextDue, dropped] = asArray(reply, 'schedule-move reply');
  const next = asInteger(nextDue, 'schedule-move next due');
  return { moved: asInteger(moved, 'schedule-move moved'), nextDueMs: next < 0 ? undefined : next, dropped: asInteger(dropped, 'schedule-move dropped') };
}
