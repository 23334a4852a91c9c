/**
 * Schedules: the one cron language of the deployment config, and what an expression means.
 *
 * A schedule is a classic 5-field cron expression in UTC — minute, hour, day-of-month,
 * month, day-of-week — with Unix numbering (day-of-week 0-7, 0 and 7 both Sunday) and
 * names (`MON-FRI`, `JAN`). croner parses it: it validates ranges and is the local stack's
 * clock. The platforms number days differently (EventBridge and Cloudflare: 1-7 = SUN-SAT),
 * so deploy code never copies the text; it renders the parsed value sets (cron.ts).
 *
 * Only a portable subset is accepted, so every platform fires on the same instants:
 * - `*`, numbers, names, `a-b`, `*\/n`, `a-b/n` and comma lists — no `L`, `W`, `#`, `?` or
 *   `@daily`-style nicknames (the platforms disagree on them or lack them);
 * - at most one of day-of-month and day-of-week other than `*`. Classic cron fires when
 *   EITHER restricted day field matches; EventBridge requires `?` in one of them and has no
 *   OR, so such an expression cannot be deployed faithfully and is refused.
 */
import { Cron, CronPattern } from 'croner';
import { ConfigError } from '../ground/errors';

export const SCHEDULE_FIELDS = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
export const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
/** Field syntax before croner reads it: digits, names (checked below), `*`, `,`, `-`, `/`. */
const PORTABLE_FIELD = /^[0-9A-Za-z*,/-]+$/;
const PORTABLE_HINT = "use only numbers, names, '*', ',', '-' and '/'";

/** A valid schedule as value sets, the form every platform mapping renders from. */
export interface Schedule {
  readonly text: string;
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  /** 1-31. Every day when `daysOfWeekOnly`. */
  readonly daysOfMonth: readonly number[];
  /** 1-12. */
  readonly months: readonly number[];
  /** 0-6, 0 = Sunday. Every day unless day-of-week was restricted. */
  readonly daysOfWeek: readonly number[];
  /** Which day field restricts the days (the other is `*`), if either does. */
  readonly restrictedDays: 'none' | 'day-of-month' | 'day-of-week';
}

function nameProblem(field: string, index: number): string | undefined {
  const names: readonly string[] = index === 3 ? MONTH_NAMES : index === 4 ? DAY_NAMES : [];
  for (const word of field.match(/[A-Za-z]+/g) ?? []) {
    if (!names.includes(word.toUpperCase())) {
      const allowed = names.length > 0 ? ` (names here: ${names[0]}-${names.at(-1)})` : '';
      return `${SCHEDULE_FIELDS[index]} field "${field}" has "${word}": ${PORTABLE_HINT}${allowed}`;
    }
  }
  return undefined;
}

function syntaxProblem(fields: readonly string[]): string | undefined {
  if (fields.length !== 5) return `must have 5 fields (${SCHEDULE_FIELDS.join(' ')}), found ${fields.length}`;
  for (const [index, field] of fields.entries()) {
    if (!PORTABLE_FIELD.test(field)) return `${SCHEDULE_FIELDS[index]} field "${field}": ${PORTABLE_HINT}`;
    const problem = nameProblem(field, index);
    if (problem) return problem;
  }
  return undefined;
}

function dayFieldsProblem(fields: readonly string[]): string | undefined {
  if (fields[2] === '*' || fields[4] === '*') return undefined;
  return (
    'restricts both day-of-month and day-of-week; cron fires when either matches, which EventBridge ' +
    "cannot express (one of them must be '?' there): keep one of the two '*'"
  );
}

const setOf = (flags: readonly number[], offset: number) => flags.flatMap((flag, i) => (flag ? [i + offset] : []));

function patternOf(text: string): CronPattern {
  // mode '5-part': a 6th (seconds) or 7th (year) field is refused, not silently accepted.
  return new CronPattern(text, 'UTC', { mode: '5-part' });
}

function parsed(text: string): Schedule | string {
  const fields = text.trim().split(/\s+/);
  const problem = syntaxProblem(fields);
  if (problem) return problem;
  let pattern: CronPattern;
  try {
    pattern = patternOf(fields.join(' '));
  } catch (error) {
    return (error as Error).message.replace(/^CronPattern: /, '');
  }
  const days = dayFieldsProblem(fields);
  if (days) return days;
  return {
    text,
    minutes: setOf(pattern.minute, 0),
    hours: setOf(pattern.hour, 0),
    daysOfMonth: setOf(pattern.day, 1),
    months: setOf(pattern.month, 1),
    daysOfWeek: setOf(pattern.dayOfWeek, 0),
    restrictedDays: fields[2] !== '*' ? 'day-of-month' : fields[4] !== '*' ? 'day-of-week' : 'none',
  };
}

/** Why `text` is not a schedule, or undefined when it is one (for schema refinements). */
export function scheduleProblem(text: string): string | undefined {
  const result = parsed(text);
  return typeof result === 'string' ? result : undefined;
}

/**
 * The value sets of a schedule; ConfigError naming `field` (e.g. `consumers.billing.schedule`)
 * when it is not one.
 */
export function parseSchedule(text: string, field = 'schedule'): Schedule {
  const result = parsed(text);
  if (typeof result === 'string') throw new ConfigError('schedule', [{ path: field, message: result }]);
  return result;
}

/** Parsed clocks by text: the local stack asks every minute, and a config holds few schedules. */
const clocks = new Map<string, Cron>();
const MAX_CLOCKS = 64;

function cronOf(text: string, field: string): Cron {
  const known = clocks.get(text);
  if (known) return known;
  parseSchedule(text, field);
  // A fixed UTC offset, not a time zone name: the same instants, without Intl lookups.
  const cron = new Cron(text.trim(), { utcOffset: 0, mode: '5-part' });
  if (clocks.size >= MAX_CLOCKS) clocks.clear();
  clocks.set(text, cron);
  return cron;
}

/** Whether the schedule fires in the UTC minute holding `at` (seconds are ignored). */
export function scheduleFiresAt(text: string, at: Date, field = 'schedule'): boolean {
  const minute = new Date(Math.floor(at.getTime() / 60_000) * 60_000);
  return cronOf(text, field).match(minute);
}

/** The instants the schedule fires at in [from, to), in order. */
export function scheduleFirings(text: string, from: Date, to: Date, field = 'schedule'): Date[] {
  const cron = cronOf(text, field);
  const firings: Date[] = [];
  // croner enumerates strictly after its start: begin one millisecond before `from`.
  for (let next = cron.nextRun(new Date(from.getTime() - 1)); next && next < to; next = cron.nextRun(next)) {
    firings.push(next);
  }
  return firings;
}
