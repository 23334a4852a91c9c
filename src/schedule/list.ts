/**
 * Listing a stream's scheduled events (lua/schedule-list.lua): earliest due first, paged by
 * position. A view for operators — events moved or cancelled between two pages shift the
 * later ones (see the script's header).
 */
import type { RedisPort } from '../redis/port';
import { asArray, asInteger, asText } from '../redis/reply';
import { runScript } from '../redis/script';
import { scheduleListScript } from '../generated/lua-scripts';
import { scheduleKeys } from '../entry/schedule-keys';
import { assertSchedulable } from './keys';

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 10_000;

export interface ScheduledEvent {
  readonly eventId: string;
  /** Due time, ms epoch (Redis clock). */
  readonly dueMs: number;
  /** The entry's `event` field; '' when its stored fields are unreadable. */
  readonly eventType: string;
  /** The entry's field names and values, summed; -1 when unreadable. */
  readonly bytes: number;
}

export interface ScheduledPage {
  /** Events in the schedule now. */
  readonly total: number;
  readonly events: readonly ScheduledEvent[];
  /** The offset of the next page; undefined after the last. */
  readonly nextOffset: number | undefined;
}

export async function listScheduled(port: RedisPort, stream: string, options: { readonly offset?: number; readonly limit?: number } = {}): Promise<ScheduledPage> {
  const offset = options.offset ?? 0;
  const limit = options.limit ?? DEFAULT_LIST_LIMIT;
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError('offset must be an integer >= 0');
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw new RangeError(`limit must be an integer in 1..=${MAX_LIST_LIMIT}`);
  assertSchedulable(stream, port.cluster);
  const schedule = scheduleKeys(stream);
  const reply = await runScript(port, { script: scheduleListScript, keys: [schedule.due, schedule.entries], args: [offset, limit] });
  const [total, rows] = asArray(reply, 'schedule-list reply');
  const events = asArray(rows, 'schedule-list rows').map((row) => {
    const [eventId, due, eventType, bytes] = asArray(row, 'schedule-list row');
    return {
      eventId: asText(eventId, 'scheduled event id'),
      dueMs: asInteger(due, 'scheduled due time'),
      eventType: asText(eventType, 'scheduled event type'),
      bytes: asInteger(bytes, 'scheduled entry bytes'),
    };
  });
  const count = asInteger(total, 'schedule size');
  const next = offset + events.length;
  return { total: count, events, nextOffset: events.length === limit && next < count ? next : undefined };
}
