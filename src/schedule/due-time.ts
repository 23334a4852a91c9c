/**
 * Due times of scheduled events (SPEC §5.6): what a caller may ask for, checked before
 * anything is sent, and the two text forms the HTTP API takes (`Deliver-At: <RFC 3339>`,
 * `Delay: <duration>`). Nothing here reads a clock to decide "due": that is the Redis
 * clock's job, in the scripts. The publisher's clock only refuses a deliverAt obviously
 * beyond the bound early; schedule-publish.lua applies the bound again on the Redis clock.
 */

/** The longest delay a schedule holds: 365 days. */
export const MAX_SCHEDULE_DELAY_MS = 365 * 86_400_000;

/** What a publish may carry: one of the two, or neither (append now). */
export interface ScheduleOptions {
  /** The instant to deliver at: a Date, or ms since the epoch. A past instant appends now. */
  readonly deliverAt?: Date | number;
  /** Deliver this many ms after Redis receives the publish (0 appends now). */
  readonly delayMs?: number;
}

/**
 * A checked due time, as schedule-publish.lua takes it: `at` an instant (ms epoch), `in` a
 * delay counted from Redis's now. Fractions of a ms are rounded up (never early).
 */
export type DueTime = { readonly mode: 'at'; readonly ms: number } | { readonly mode: 'in'; readonly ms: number };

export type DueTimeCheck = { readonly ok: true; readonly due: DueTime | undefined } | { readonly ok: false; readonly field: 'deliverAt' | 'delayMs'; readonly message: string };

function describeBound(maxDelayMs: number): string {
  return maxDelayMs % 86_400_000 === 0 ? `${maxDelayMs / 86_400_000} days` : `${maxDelayMs} ms`;
}

/**
 * The due time of a publish, or why it cannot have one (naming the option). `now` is the
 * publisher's clock, used only to refuse a deliverAt beyond the bound before sending.
 */
export function checkDueTime(options: ScheduleOptions, maxDelayMs: number, now: number): DueTimeCheck {
  const { deliverAt, delayMs } = options;
  if (deliverAt !== undefined && delayMs !== undefined) return { ok: false, field: 'deliverAt', message: 'give deliverAt or delayMs, not both' };
  if (delayMs !== undefined) {
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) {
      return { ok: false, field: 'delayMs', message: 'delayMs must be a finite number of ms >= 0' };
    }
    const ms = Math.ceil(delayMs);
    if (ms > maxDelayMs) return { ok: false, field: 'delayMs', message: `delayMs must be at most ${describeBound(maxDelayMs)} (${maxDelayMs} ms)` };
    return { ok: true, due: { mode: 'in', ms } };
  }
  if (deliverAt !== undefined) {
    const at = deliverAt instanceof Date ? deliverAt.getTime() : deliverAt;
    if (typeof at !== 'number' || !Number.isFinite(at)) {
      return { ok: false, field: 'deliverAt', message: 'deliverAt must be a valid Date or a finite number of ms since the epoch' };
    }
    if (at - now > maxDelayMs) return { ok: false, field: 'deliverAt', message: `deliverAt must be at most ${describeBound(maxDelayMs)} from now` };
    // An instant before the epoch is as past as the epoch: both append now.
    return { ok: true, due: { mode: 'at', ms: Math.max(0, Math.ceil(at)) } };
  }
  return { ok: true, due: undefined };
}

const DURATION = /^(\d{1,15})(ms|s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A `Delay` header: a non-negative integer and a unit, `ms`, `s`, `m`, `h` or `d` (`500ms`,
 * `30s`, `5m`, `2h`, `7d`) — the CLI's duration grammar. The unit is required: a bare `90`
 * could mean seconds as easily as ms. Undefined when the text is not of that form.
 */
export function parseDelay(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2]!]!;
  return Number.isSafeInteger(ms) ? ms : undefined;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Days of a month (1..12) in a year; setUTCFullYear, unlike Date.UTC, takes years 0..99 as written. */
function daysIn(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}

/**
 * A `Deliver-At` header: an RFC 3339 date-time with its offset (`2026-12-24T18:00:00Z`,
 * `2026-12-24T19:00:00.250+01:00`), as ms since the epoch — fractions below a ms rounded
 * up, so the instant is never earlier than written. Undefined when the text is not one
 * (a date without a time or offset, an impossible date, a leap second).
 */
export function parseRfc3339(text: string): number | undefined {
  const match = RFC3339.exec(text.trim());
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const fraction = match[7];
  const sign = match[9];
  const offsetHours = sign ? Number(match[10]) : 0;
  const offsetMinutes = sign ? Number(match[11]) : 0;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const offsetMs = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  // In whole nanoseconds first, so `.007` is 7 ms and not 7.000000000000001 rounded up to 8.
  const fractionMs = fraction === undefined ? 0 : Math.ceil(Number(fraction.slice(1).padEnd(9, '0')) / 1_000_000);
  return date.getTime() - offsetMs + fractionMs;
}

/** ms since the epoch as RFC 3339 in UTC, e.g. `2026-12-24T18:00:00.000Z`. */
export function formatRfc3339(ms: number): string {
  return new Date(ms).toISOString();
}
