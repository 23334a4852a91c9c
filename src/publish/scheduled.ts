/**
 * The publisher's side of scheduled delivery (SPEC §5.6): checking a publish's due time,
 * the schedule-publish.lua call that keeps the signed entry in the stream's schedule (or
 * appends it at once when its time has come), and reading what it answers — including the
 * `scheduled@<due>` / `cancelled@<due>` originals a dedupe record of a scheduled event
 * holds, which publish.lua hands back too.
 */
import { sizeKeys } from '../entry/size-keys';
import { schedulePublishScript } from '../generated/lua-scripts';
import type { RedisReply } from '../redis/port';
import { asArray, asInteger, asText } from '../redis/reply';
import type { Operation } from '../redis/script';
import { checkDueTime, type DueTime } from '../schedule/due-time';
import { scheduleKeys } from '../entry/schedule-keys';
import { scheduleSlotProblem } from '../schedule/keys';
import type { PublisherConfig, PublishRoute } from './config';
import type { PreparedEntry, PublishEvent } from './entry-fields';
import { PublishError } from './errors';

/** What a publish result says about a schedule: present when the event (for a duplicate, its original) was scheduled. */
export interface ScheduledState {
  /** The due time, ms since the epoch, on the Redis clock. */
  readonly deliverAtMs: number;
  /**
   * ms from Redis's now, when it answered this publish, to the due time (0 once due): what a
   * platform wake-up is delayed by. Undefined when the answer came without Redis's time (a
   * publish without a due time that turned out to repeat a scheduled event).
   */
  readonly dueInMs: number | undefined;
  /** The original was cancelled (`saga-streams schedule cancel`): it will not be delivered. */
  readonly cancelled: boolean;
}

/** The parts of a PublishResult a reply decides. */
export interface PublishOutcome {
  /** '' while the event — for a duplicate, the original — is scheduled, not appended. */
  readonly entryId: string;
  readonly duplicate: boolean;
  readonly scheduled?: ScheduledState;
}

/**
 * The due time of an event (undefined: append now), or a PublishError naming the option.
 * `now` is the publisher's clock: used only to refuse a deliverAt obviously past the bound
 * before sending; the script applies the bound again on the Redis clock.
 */
export function dueTimeOf(event: PublishEvent, route: PublishRoute, config: PublisherConfig, cluster: boolean, now: number): DueTime | undefined {
  const check = checkDueTime(event, config.maxDelayMs, now);
  if (!check.ok) throw new PublishError('PUBLISH_SCHEDULE_INVALID', `${check.message} (event ${event.eventId})`, { field: check.field });
  if (check.due === undefined) return undefined;
  const problem = scheduleSlotProblem(route.stream, cluster);
  if (problem !== undefined) throw new PublishError('PUBLISH_SCHEDULE_UNSUPPORTED', problem);
  return check.due;
}

/** Field/value pairs the dedupe digest covers (as publish.lua's): event type, event id, payload. */
const BODY_PAIRS = 3;

export function scheduledOperation(config: PublisherConfig, entry: PreparedEntry, due: DueTime): Operation {
  const { route, event, fields } = entry;
  const sizes = sizeKeys(route.stream);
  const schedule = scheduleKeys(route.stream);
  const window = config.dedupeWindowSeconds;
  return {
    script: schedulePublishScript,
    keys: [route.stream, sizes.counts, sizes.large, schedule.due, schedule.entries, ...(window > 0 ? [route.dedupePrefix + event.eventId] : [])],
    args: [window, BODY_PAIRS, event.eventId, due.mode, due.ms, config.maxDelayMs, ...fields],
  };
}

const SCHEDULED_ORIGINAL = /^(scheduled|cancelled)@(\d+)$/;

/**
 * What a duplicate's original was: an appended entry (its id), or a scheduled event (its
 * due time, and whether it was cancelled). `now` (Redis's, ms) gives the time left to it.
 */
export function duplicateOf(original: string, now?: number): PublishOutcome {
  const match = SCHEDULED_ORIGINAL.exec(original);
  if (!match) return { entryId: original, duplicate: true };
  const deliverAtMs = Number(match[2]);
  const cancelled = match[1] === 'cancelled';
  const dueInMs = now === undefined || cancelled ? undefined : Math.max(0, deliverAtMs - now);
  return { entryId: '', duplicate: true, scheduled: { deliverAtMs, dueInMs, cancelled } };
}

export function keyReused(eventId: string): PublishError {
  return new PublishError('PUBLISH_KEY_REUSED', `event_id ${eventId} was already published with a different body within the dedupe window: use a new event_id for a new event`);
}

/** The outcome of one schedule-publish.lua reply (see its header for the statuses). */
export function scheduledOutcome(entry: PreparedEntry, reply: RedisReply, maxDelayMs: number): PublishOutcome {
  const [status, original, due, now] = asArray(reply, 'schedule-publish reply');
  const code = asInteger(status, 'schedule-publish status');
  const dueMs = asInteger(due, 'schedule-publish due');
  const nowMs = asInteger(now, 'schedule-publish now');
  if (code === 0) return { entryId: asText(original, 'schedule-publish entry id'), duplicate: false };
  if (code === 1) return duplicateOf(asText(original, 'schedule-publish original'), nowMs);
  if (code === 2) throw keyReused(entry.event.eventId);
  if (code === 4) {
    throw new PublishError(
      'PUBLISH_SCHEDULE_INVALID',
      `deliverAt of ${entry.event.eventId} is more than maxDelayMs (${maxDelayMs} ms) from now by the Redis clock; nothing was written`,
      { field: 'deliverAt' },
    );
  }
  return { entryId: '', duplicate: false, scheduled: { deliverAtMs: dueMs, dueInMs: Math.max(0, dueMs - nowMs), cancelled: false } };
}
