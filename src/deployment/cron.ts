/**
 * A schedule (schedule.ts: 5-field cron, UTC, Unix day-of-week 0-7) as each platform must be
 * told it, so that it fires on the same instants as the local stack:
 * - EventBridge `cron(min hour dom month dow year)`: day-of-week 1-7 = SUN-SAT, one of
 *   day-of-month / day-of-week must be `?`, steps written `start/step`.
 * - Cloudflare Cron Triggers: 5 fields, day-of-week 1-7 = SUN-SAT, steps `*\/step`.
 * The output is rendered from the parsed value sets, never copied from the text: numbers
 * mean different days on the two sides, so days of the week are written as names (MON-FRI),
 * which both platforms read the same way.
 */
import { DAY_NAMES, parseSchedule, scheduleProblem, type Schedule } from './schedule';

interface Range {
  readonly min: number;
  readonly max: number;
}

const MINUTE: Range = { min: 0, max: 59 };
const HOUR: Range = { min: 0, max: 23 };
const DAY_OF_MONTH: Range = { min: 1, max: 31 };
const MONTH: Range = { min: 1, max: 12 };
const DAY_OF_WEEK: Range = { min: 0, max: 6 };

type StepStyle = 'eventbridge' | 'cloudflare';

/** Whether `values` is start, start+step, … up to the field's end (what `start/step` means). */
function stepOf(values: readonly number[], range: Range): number | undefined {
  if (values.length < 3) return undefined;
  const step = values[1]! - values[0]!;
  const regular = values.every((v, i) => v === values[0]! + i * step);
  return regular && values.at(-1)! + step > range.max ? step : undefined;
}

/** Consecutive runs as `a-b` (three or more values) or single values, comma-separated. */
function runs(values: readonly number[], name: (value: number) => string): string {
  const parts: string[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[j]! + 1) j += 1;
    if (j - i >= 2) parts.push(`${name(values[i]!)}-${name(values[j]!)}`);
    else for (let k = i; k <= j; k += 1) parts.push(name(values[k]!));
    i = j + 1;
  }
  return parts.join(',');
}

function numericField(values: readonly number[], range: Range, style: StepStyle): string {
  if (values.length === range.max - range.min + 1) return '*';
  const step = stepOf(values, range);
  if (step !== undefined && style === 'eventbridge') return `${values[0]}/${step}`;
  if (step !== undefined && values[0] === range.min) return `*/${step}`;
  return runs(values, String);
}

function dayOfWeekField(days: readonly number[]): string {
  if (days.length === DAY_OF_WEEK.max + 1) return '*';
  return runs(days, (day) => DAY_NAMES[day]!);
}

/** The day fields of a platform without OR between them: the unrestricted one is `*`. */
function dayFields(schedule: Schedule, style: StepStyle): [string, string] {
  const dom = schedule.restrictedDays === 'day-of-month' ? numericField(schedule.daysOfMonth, DAY_OF_MONTH, style) : '*';
  const dow = schedule.restrictedDays === 'day-of-week' ? dayOfWeekField(schedule.daysOfWeek) : '*';
  return [dom, dow];
}

/** True when `text` is a schedule every platform can run (see schedule.ts). */
export function isCronExpression(text: string): boolean {
  return scheduleProblem(text) === undefined;
}

/**
 * EventBridge's form of a schedule, e.g. `0 9 * * 1-5` → `cron(0 9 ? * MON-FRI *)`.
 * ConfigError naming `field` when the text is not a valid schedule.
 */
export function toEventBridgeCron(text: string, field = 'schedule'): string {
  const schedule = parseSchedule(text, field);
  const [dom, dow] = dayFields(schedule, 'eventbridge');
  const minute = numericField(schedule.minutes, MINUTE, 'eventbridge');
  const hour = numericField(schedule.hours, HOUR, 'eventbridge');
  const month = numericField(schedule.months, MONTH, 'eventbridge');
  // `?` goes where no restriction is; with neither restricted, day-of-week takes it.
  const [domOut, dowOut] = dow === '*' ? [dom, '?'] : ['?', dow];
  return `cron(${minute} ${hour} ${domOut} ${month} ${dowOut} *)`;
}

/**
 * The Cloudflare Cron Trigger for a schedule, e.g. `0 9 * * 1-5` → `0 9 * * MON-FRI`. The
 * Worker is handed this exact text when it fires, so wrangler.toml must list it as is.
 */
export function toCloudflareCron(text: string, field = 'schedule'): string {
  const schedule = parseSchedule(text, field);
  const [dom, dow] = dayFields(schedule, 'cloudflare');
  const minute = numericField(schedule.minutes, MINUTE, 'cloudflare');
  const hour = numericField(schedule.hours, HOUR, 'cloudflare');
  const month = numericField(schedule.months, MONTH, 'cloudflare');
  return `${minute} ${hour} ${dom} ${month} ${dow}`;
}
