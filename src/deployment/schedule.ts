/**
 * Schedules: the one cron language of the deployment config, and what an expression means.
 *
 * A schedule is a classic 5-field cron expression in UTC — minute, hour, day-of-month,
 * month, day-of-week — with Unix numbering (day-of-week 0-7, 0 and 7 both Sunday) and
 * names (`MON-FRI`, `JAN`). It is parsed here into value sets, without a cron library: this
 * runs in every function's cold start (config validation), and the local stack's clock
 * (schedule-clock.ts) is the only part that needs croner. The platforms number days differently (EventBridge and Cloudflare: 1-7 = SUN-SAT),
 * so deploy code never copies the text; it renders the parsed value sets (cron.ts).
 *
 * Only a portable subset is accepted, so every platform fires on the same instants:
 * - `*`, numbers, names, `a-b`, `*\/n`, `a-b/n` and comma lists — no `L`, `W`, `#`, `?` or
 *   `@daily`-style nicknames (the platforms disagree on them or lack them);
 * - at most one of day-of-month and day-of-week other than `*`. Classic cron fires when
 *   EITHER restricted day field matches; EventBridge requires `?` in one of them and has no
 *   OR, so such an expression cannot be deployed faithfully and is refused.
 */
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

/** Each field's bounds, and the names it accepts (their index plus the field's minimum). */
const FIELD_RANGES: readonly (readonly [min: number, max: number, names: readonly string[]])[] = [
  [0, 59, []],
  [0, 23, []],
  [1, 31, []],
  [1, 12, MONTH_NAMES],
  // 7 is Sunday too (Unix numbering); it is folded onto 0 below.
  [0, 7, DAY_NAMES],
];

const ITEM = /^(?:(\*)|([0-9A-Za-z]+)(?:-([0-9A-Za-z]+))?)(?:\/([0-9]+))?$/;

/** The values one comma-separated field stands for, or why it stands for none. */
function fieldValues(field: string, index: number): Set<number> | string {
  const [min, max, names] = FIELD_RANGES[index]!;
  const label = `${SCHEDULE_FIELDS[index]} field "${field}"`;
  const valueOf = (word: string): number | string => {
    const named = names.findIndex((name) => name === word.toUpperCase());
    const value = named >= 0 ? named + min : /^[0-9]+$/.test(word) ? Number(word) : Number.NaN;
    return value >= min && value <= max ? value : `${label}: ${word} is outside ${min}-${max}`;
  };
  const values = new Set<number>();
  for (const item of field.split(',')) {
    const match = ITEM.exec(item);
    if (!match) return `${label}: "${item}" is not a value, a range or a step`;
    const [, star, first, last, stepText] = match;
    // `a/n` means "from a on" in some crons and nothing in others: refused as illegal stepping.
    if (stepText !== undefined && star === undefined && last === undefined) return `${label}: illegal stepping "${item}" (write a-b/n or */n)`;
    const from = star === undefined ? valueOf(first!) : min;
    const to = star === undefined ? (last === undefined ? from : valueOf(last)) : max;
    if (typeof from === 'string') return from;
    if (typeof to === 'string') return to;
    if (from > to) return `${label}: range ${item} runs backwards`;
    const step = stepText === undefined ? 1 : Number(stepText);
    // A step is at most the field's count of values (what croner, the local clock, accepts);
    // day-of-week has 7, its 7 being 0 again.
    const count = index === 4 ? 7 : max - min + 1;
    if (step < 1 || step > count) return `${label}: illegal stepping "${item}" (a step is 1-${count})`;
    for (let value = from; value <= to; value += step) values.add(index === 4 && value === 7 ? 0 : value);
  }
  return values;
}

const sorted = (values: Set<number>) => [...values].sort((a, b) => a - b);

function parsed(text: string): Schedule | string {
  const fields = text.trim().split(/\s+/);
  const problem = syntaxProblem(fields);
  if (problem) return problem;
  const sets: Set<number>[] = [];
  for (const [index, field] of fields.entries()) {
    const values = fieldValues(field, index);
    if (typeof values === 'string') return values;
    sets.push(values);
  }
  const days = dayFieldsProblem(fields);
  if (days) return days;
  const [minutes, hours, daysOfMonth, months, daysOfWeek] = sets.map(sorted) as [number[], number[], number[], number[], number[]];
  return {
    text,
    minutes,
    hours,
    daysOfMonth,
    months,
    daysOfWeek,
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
