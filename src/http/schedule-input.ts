/**
 * The due time of an HTTP publish (SPEC §5.6, §6.2): `Deliver-At: <RFC 3339>` or `Delay:
 * <duration>` headers on `POST /v1/events/{type}` (and on a batch, for every event), or the
 * `deliver_at` / `delay` members of a batch event. Checked before anything is sent; a bad
 * value is a 400 naming the header (or member) at fault.
 *
 * Grammar. Deliver-At: an RFC 3339 date-time with its offset, `2026-12-24T18:00:00Z` or
 * `2026-12-24T19:00:00.250+01:00`; an instant already past appends the event now. Delay: a
 * non-negative integer and a unit — `ms`, `s`, `m`, `h`, `d` (`500ms`, `30s`, `5m`, `2h`,
 * `1d`); `0s` appends now. Either at most the publisher's maxDelayMs (365 days) ahead.
 */
import { parseDelay, parseRfc3339, type ScheduleOptions } from '../schedule/due-time';
import type { ProblemCode } from '../web/problems';

export interface ScheduleInput {
  readonly deliverAt?: string;
  readonly delay?: string;
}

/** How the two inputs are called where they came from, for the error (`Deliver-At` / `deliver_at`). */
export interface ScheduleInputNames {
  readonly deliverAt: string;
  readonly delay: string;
}

export const SCHEDULE_HEADERS: ScheduleInputNames = { deliverAt: 'Deliver-At', delay: 'Delay' };
export const SCHEDULE_MEMBERS: ScheduleInputNames = { deliverAt: 'deliver_at', delay: 'delay' };

export type ScheduleInputCheck =
  | { readonly ok: true; readonly schedule: ScheduleOptions | undefined }
  | { readonly ok: false; readonly code: ProblemCode; readonly detail: string; readonly field: string };

function days(ms: number): string {
  return ms % 86_400_000 === 0 ? `${ms / 86_400_000} days` : `${ms} ms`;
}

/** `now` (the server's clock) only refuses a Deliver-At beyond the bound early: Redis applies it again. */
export function checkScheduleInput(input: ScheduleInput, names: ScheduleInputNames, maxDelayMs: number, now: number): ScheduleInputCheck {
  const { deliverAt, delay } = input;
  if (deliverAt !== undefined && delay !== undefined) {
    return { ok: false, code: 'schedule_conflict', field: names.deliverAt, detail: `send ${names.deliverAt} or ${names.delay}, not both` };
  }
  if (deliverAt !== undefined) {
    const at = parseRfc3339(deliverAt);
    if (at === undefined) {
      return { ok: false, code: 'deliver_at_invalid', field: names.deliverAt, detail: `${names.deliverAt} must be an RFC 3339 date-time with an offset, e.g. 2026-12-24T18:00:00Z` };
    }
    if (at - now > maxDelayMs) return { ok: false, code: 'deliver_at_invalid', field: names.deliverAt, detail: `${names.deliverAt} must be at most ${days(maxDelayMs)} from now` };
    return { ok: true, schedule: { deliverAt: at } };
  }
  if (delay !== undefined) {
    const ms = parseDelay(delay);
    if (ms === undefined) {
      return { ok: false, code: 'delay_invalid', field: names.delay, detail: `${names.delay} must be a duration: digits and a unit (ms, s, m, h, d), e.g. 30s, 5m, 2h or 1d` };
    }
    if (ms > maxDelayMs) return { ok: false, code: 'delay_invalid', field: names.delay, detail: `${names.delay} must be at most ${days(maxDelayMs)}` };
    return { ok: true, schedule: { delayMs: ms } };
  }
  return { ok: true, schedule: undefined };
}
