/**
 * Test-only interpreters of the two platforms' documented cron syntax, written apart from
 * the product's mapping so a test can ask "when would the platform fire this text?":
 *
 * - EventBridge `cron(min hour dom month dow year)` (AWS "Cron expressions reference"):
 *   minutes 0-59, hours 0-23, day-of-month 1-31, month 1-12 or JAN-DEC, day-of-week 1-7 or
 *   SUN-SAT (1 = Sunday), year; wildcards `, - * /` (no `/` in day-of-week), `a/n` = from a
 *   every n; `?` = any, required in exactly one of day-of-month and day-of-week.
 * - Cloudflare Cron Triggers (Workers docs "Cron Triggers"): 5 fields, weekdays 1-7 with
 *   `0 17 * * sun` = `0 17 * * 1` (1 = Sunday) and `mon-fri` = `2-6`, case-insensitive
 *   3-letter names for months and weekdays, wildcards `* , - /`.
 *
 * Only the parts our mapping may emit are implemented; anything else throws, so an output
 * outside the documented syntax fails the test instead of being guessed at.
 */

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** Names in order, the first one worth `min`. */
  readonly names?: readonly string[];
  /** Characters the platform documents for this field. */
  readonly allowed: RegExp;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

type Values = ReadonlySet<number> | 'any';

function valueOf(token: string, spec: FieldSpec): number {
  const byName = spec.names?.indexOf(token.toUpperCase()) ?? -1;
  const value = byName >= 0 ? spec.min + byName : /^\d+$/.test(token) ? Number(token) : NaN;
  if (!(value >= spec.min && value <= spec.max)) throw new Error(`${spec.name}: "${token}" is not a value`);
  return value;
}

function field(text: string, spec: FieldSpec): Values {
  if (!spec.allowed.test(text)) throw new Error(`${spec.name}: "${text}" uses syntax the platform does not document here`);
  if (text === '?') return 'any';
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const [range, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    let [from, to] = [spec.min, spec.max];
    if (range.includes('-')) [from, to] = range.split('-').map((t) => valueOf(t, spec)) as [number, number];
    else if (range !== '*') [from, to] = [valueOf(range, spec), stepText === undefined ? valueOf(range, spec) : spec.max];
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return values;
}

const has = (values: Values, value: number) => values === 'any' || values.has(value);

/** The minute-level matcher of a platform expression. */
export type Matcher = (at: Date) => boolean;

function matcher(minute: Values, hour: Values, dom: Values, month: Values, dow: Values): Matcher {
  return (at) =>
    has(minute, at.getUTCMinutes()) &&
    has(hour, at.getUTCHours()) &&
    has(dom, at.getUTCDate()) &&
    has(month, at.getUTCMonth() + 1) &&
    has(dow, at.getUTCDay() + 1); // both platforms: 1 = Sunday
}

const NUMERIC = /^[0-9A-Za-z*,/-]+$/;

export function eventBridgeMatcher(expression: string): Matcher {
  const inner = /^cron\((.*)\)$/.exec(expression)?.[1];
  const parts = inner?.split(' ') ?? [];
  if (parts.length !== 6) throw new Error(`not an EventBridge cron expression: ${expression}`);
  const [m, h, dom, mon, dow, year] = parts as [string, string, string, string, string, string];
  if ((dom === '?') === (dow === '?')) throw new Error(`exactly one of day-of-month and day-of-week must be ?: ${expression}`);
  if (year !== '*') throw new Error(`year field not interpreted here: ${expression}`);
  return matcher(
    field(m, { name: 'minutes', min: 0, max: 59, allowed: /^[0-9*,/-]+$/ }),
    field(h, { name: 'hours', min: 0, max: 23, allowed: /^[0-9*,/-]+$/ }),
    field(dom, { name: 'day-of-month', min: 1, max: 31, allowed: /^(\?|[0-9*,/-]+)$/ }),
    field(mon, { name: 'month', min: 1, max: 12, names: MONTHS, allowed: NUMERIC }),
    field(dow, { name: 'day-of-week', min: 1, max: 7, names: DAYS, allowed: /^(\?|[0-9A-Za-z*,-]+)$/ }),
  );
}

export function cloudflareMatcher(expression: string): Matcher {
  const parts = expression.split(' ');
  if (parts.length !== 5) throw new Error(`not a 5-field Cloudflare cron: ${expression}`);
  const [m, h, dom, mon, dow] = parts as [string, string, string, string, string];
  // The docs do not say how a restricted day-of-month combines with a restricted weekday.
  if (dom !== '*' && dow !== '*') throw new Error(`both day fields restricted, semantics undocumented: ${expression}`);
  return matcher(
    field(m, { name: 'minute', min: 0, max: 59, allowed: /^[0-9*,/-]+$/ }),
    field(h, { name: 'hours', min: 0, max: 23, allowed: /^[0-9*,/-]+$/ }),
    field(dom, { name: 'days of month', min: 1, max: 31, allowed: /^[0-9*,/-]+$/ }),
    field(mon, { name: 'months', min: 1, max: 12, names: MONTHS, allowed: NUMERIC }),
    field(dow, { name: 'weekdays', min: 1, max: 7, names: DAYS, allowed: NUMERIC }),
  );
}

/** Every minute in [from, to) the matcher fires at. */
export function firingsOf(match: Matcher, from: Date, to: Date): Date[] {
  const found: Date[] = [];
  for (let t = from.getTime(); t < to.getTime(); t += 60_000) if (match(new Date(t))) found.push(new Date(t));
  return found;
}
