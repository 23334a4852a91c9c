/**
 * Cancelling a scheduled event by its event_id (lua/schedule-cancel.lua). Cancel and the
 * move are each one script: exactly one of them wins a race, and neither leaves half.
 */
import { isValidEventId } from '../entry/keys';
import { hashTagOf } from '../entry/hash-tag';
import type { RedisPort } from '../redis/port';
import { asArray, asInteger } from '../redis/reply';
import { runScript } from '../redis/script';
import { scheduleCancelScript } from '../generated/lua-scripts';
import { scheduleKeys } from '../entry/schedule-keys';
import { assertSchedulable } from './keys';

export type CancelOutcome =
  /** Removed from the schedule before any move: it will never be appended. */
  | { readonly status: 'cancelled'; readonly eventId: string; readonly dueMs: number }
  /** Not in the schedule: moved already (appended), cancelled already, or never scheduled. */
  | { readonly status: 'not_scheduled'; readonly eventId: string };

export interface CancelOptions {
  /**
   * The publishers' dedupe prefix of the stream (default `<stream>:pub:`). Its record of the
   * event becomes `cancelled@<due>`, so a retried publish inside the window stays a duplicate
   * instead of scheduling the event again. `null`: the publishers keep no dedupe records.
   */
  readonly dedupePrefix?: string | null;
}

export async function cancelScheduled(port: RedisPort, stream: string, eventId: string, options: CancelOptions = {}): Promise<CancelOutcome> {
  if (!isValidEventId(eventId)) throw new RangeError('eventId must be 1..=256 printable ASCII characters without spaces');
  assertSchedulable(stream, port.cluster);
  const schedule = scheduleKeys(stream);
  const prefix = options.dedupePrefix === undefined ? `${stream}:pub:` : options.dedupePrefix;
  const keys = [schedule.due, schedule.entries];
  // A record off the stream's slot cannot be touched beside it on Cluster: left alone then.
  if (prefix !== null && (!port.cluster || hashTagOf(prefix + eventId) === hashTagOf(stream))) keys.push(prefix + eventId);
  const reply = await runScript(port, { script: scheduleCancelScript, keys, args: [eventId] });
  const [cancelled, due] = asArray(reply, 'schedule-cancel reply');
  return asInteger(cancelled, 'schedule-cancel status') === 1
    ? { status: 'cancelled', eventId, dueMs: asInteger(due, 'schedule-cancel due') }
    : { status: 'not_scheduled', eventId };
}
