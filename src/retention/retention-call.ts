/**
 * The one script of a retention pass (lua/retention.lua): the safe trim, the DLT retention
 * and the consumer reaper of one stream, each asked for or not, in one call — an idle trim
 * costs one billed command per stream (SPEC §10). Each part answers in its own slot, with
 * its result or its error, so a part that fails leaves what the others did visible.
 */
import { RedisCommandError } from '../ground/errors';
import { retentionScript } from '../generated/lua-scripts';
import type { RedisReply } from '../redis/port';
import { asArray, asText, isBytes } from '../redis/reply';
import type { ScriptCall } from '../redis/script';
import { sizeKeys } from '../entry/size-keys';
import { scheduleKeys } from '../entry/schedule-keys';

export interface RetentionParts {
  /** Safe trim with this limit (0: exact and unbounded). */
  readonly trim?: { readonly limit: number };
  /** DLT retention of `dlt`, a window of `retentionSeconds`. */
  readonly deadLetters?: { readonly dlt: string; readonly retentionSeconds: number };
  readonly reaper?: { readonly idleMs: number; readonly maxPerRun: number; readonly groups?: readonly string[] | undefined };
  /** Move at most `maxMoved` due scheduled events of the stream into it first (SPEC §5.6). */
  readonly move?: { readonly maxMoved: number };
}

/**
 * The call for `stream` (a DLT-only pass names the DLT there: every key of a call shares one
 * Cluster slot, and the keys of a part not asked for are never touched).
 */
export function retentionCall(stream: string, parts: RetentionParts): ScriptCall {
  const sizes = sizeKeys(stream);
  const schedule = scheduleKeys(stream);
  const sizeKeysUsed = parts.trim || parts.move ? [sizes.large, sizes.counts] : [stream, stream];
  const scheduleKeysUsed = parts.move ? [schedule.due, schedule.entries] : [stream, stream];
  const { reaper } = parts;
  return {
    script: retentionScript,
    keys: [stream, ...sizeKeysUsed, parts.deadLetters?.dlt ?? stream, ...scheduleKeysUsed],
    args: [
      parts.trim ? parts.trim.limit : '',
      parts.deadLetters ? parts.deadLetters.retentionSeconds : '',
      reaper ? reaper.idleMs : '',
      reaper ? reaper.maxPerRun : '',
      parts.move ? parts.move.maxMoved : '',
      ...(reaper?.groups ?? []),
    ],
  };
}

export type RetentionSlot = 'trim' | 'dlt' | 'reap' | 'move';
const SLOTS: readonly RetentionSlot[] = ['trim', 'dlt', 'reap', 'move'];

/** One part's reply from the script's, or the error that part met (a RedisCommandError naming it). */
export function retentionPart(reply: RedisReply, slot: RetentionSlot): RedisReply[] | RedisCommandError {
  const part = asArray(asArray(reply, 'retention reply')[SLOTS.indexOf(slot)], `retention ${slot} reply`);
  if (part.length === 2 && isBytes(part[0]) && asText(part[0], 'retention part') === 'error') {
    return new RedisCommandError(`script retention (${slot})`, asText(part[1], `retention ${slot} error`));
  }
  return part;
}

/** The part's reply; its error thrown. */
export function partOrThrow(reply: RedisReply, slot: RetentionSlot): RedisReply[] {
  const part = retentionPart(reply, slot);
  if (part instanceof RedisCommandError) throw part;
  return part;
}
