/**
 * Issue 12 item 15: one schedule language, the same instants everywhere. For a table of
 * expressions, the local stack's firings (croner) equal EventBridge's and Cloudflare's,
 * each computed by interpreting the MAPPED expression with that platform's documented
 * semantics (platform-cron.ts). Expressions no platform mapping can carry are refused,
 * naming the field.
 */
import { CronPattern } from 'croner';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCronExpression, toCloudflareCron, toEventBridgeCron } from '../../src/deployment/cron';
import { parseSchedule, scheduleProblem } from '../../src/deployment/schedule';
import { scheduleFirings, scheduleFiresAt } from '../../src/deployment/schedule-clock';
import { cloudflareMatcher, eventBridgeMatcher, firingsOf } from './platform-cron';

/** Ten weeks across two month ends, starting on a Thursday. */
const FROM = new Date('2026-01-01T00:00:00Z');
const TO = new Date('2026-03-12T00:00:00Z');
const iso = (dates: readonly Date[]) => dates.map((d) => d.toISOString());

describe('schedule validation', () => {
  it.each(['0 9 * * 1', '0 9 * * MON-FRI', '0 9 * * mon-fri', '0 0 1 JAN *', '0 0 * * 7', '*/15 * * * *', '5-10/5 * * * *', '0 0 */2 * *'])(
    'accepts %s',
    (text) => {
      expect(scheduleProblem(text)).toBeUndefined();
      expect(isCronExpression(text)).toBe(true);
    },
  );

  it.each([
    ['99 99 99 99 99', /minute/],
    ['0 24 * * *', /hour/],
    ['0 0 32 * *', /day/],
    ['* * * * * *', /5 fields/],
    ['* * * *', /5 fields/],
    ['0 9 1 * 1', /restricts both day-of-month and day-of-week/],
    ['0 9 1-15 * MON', /restricts both/],
    ['0 0 L * *', /"L"/],
    ['0 0 ? * MON', /day-of-month field "\?"/],
    ['0 0 * * 1#2', /day-of-week field "1#2"/],
    ['@daily', /5 fields/],
    ['0 0 * MON *', /month field "MON" has "MON"/],
    ['0 0 * * JAN', /day-of-week field "JAN"/],
    ['5/15 * * * *', /stepping/],
  ])('refuses %s', (text, reason) => {
    expect(scheduleProblem(text)).toMatch(reason);
    expect(isCronExpression(text)).toBe(false);
  });

  it('throws a typed error naming the field', () => {
    const error = (() => {
      try {
        toEventBridgeCron('0 9 1 * 1', 'consumers.billing.schedule');
      } catch (e) {
        return e as Error & { code?: string };
      }
    })();
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toMatch(/consumers\.billing\.schedule: restricts both day-of-month and day-of-week/);
    expect(() => toCloudflareCron('99 99 99 99 99', 'trim.schedule')).toThrow(/trim\.schedule: /);
    expect(() => parseSchedule('nope')).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });
});

describe('platform forms', () => {
  it.each([
    ['0 9 * * 1', 'cron(0 9 ? * MON *)', '0 9 * * MON'],
    ['0 9 * * 1-5', 'cron(0 9 ? * MON-FRI *)', '0 9 * * MON-FRI'],
    ['0 9 * * MON-FRI', 'cron(0 9 ? * MON-FRI *)', '0 9 * * MON-FRI'],
    ['*/15 * * * *', 'cron(0/15 * * * ? *)', '*/15 * * * *'],
    ['* * * * *', 'cron(* * * * ? *)', '* * * * *'],
    ['0 0 1 * *', 'cron(0 0 1 * ? *)', '0 0 1 * *'],
    ['0 12 * * SUN', 'cron(0 12 ? * SUN *)', '0 12 * * SUN'],
    ['30 2 * * 0,6', 'cron(30 2 ? * SUN,SAT *)', '30 2 * * SUN,SAT'],
    ['0 0 * * 5-7', 'cron(0 0 ? * SUN,FRI,SAT *)', '0 0 * * SUN,FRI,SAT'],
    ['0 0 * * 0-6', 'cron(0 0 * * ? *)', '0 0 * * *'],
    ['15 */6 * JAN,JUL *', 'cron(15 0/6 * 1,7 ? *)', '15 */6 * 1,7 *'],
  ])('%s → EventBridge %s, Cloudflare %s', (text, eventBridge, cloudflare) => {
    expect(toEventBridgeCron(text)).toBe(eventBridge);
    expect(toCloudflareCron(text)).toBe(cloudflare);
  });
});

describe('local, EventBridge and Cloudflare fire on the same instants', () => {
  it.each([
    '0 9 * * 1',
    '0 9 * * 1-5',
    '0 9 * * MON-FRI',
    '*/15 * * * *',
    '0 0 1 * *',
    '0 12 * * SUN',
    '30 2 * * 0,6',
    '0 0 * * 7',
    '0 0 * * 5-7',
    '0 6 * * */2',
    '15 */6 * JAN,MAR *',
    '0 0 */2 * *',
    '5-10/5 3 * * *',
    '0 8-17/3 10-20 * *',
  ])('%s', (text) => {
    const local = iso(scheduleFirings(text, FROM, TO));
    expect(local.length).toBeGreaterThan(0);
    expect(iso(firingsOf(eventBridgeMatcher(toEventBridgeCron(text)), FROM, TO))).toEqual(local);
    expect(iso(firingsOf(cloudflareMatcher(toCloudflareCron(text)), FROM, TO))).toEqual(local);
    // The local stack's per-minute check agrees with the enumeration (over its first days).
    const until = new Date('2026-01-04T00:00:00Z');
    expect(iso(firingsOf((at) => scheduleFiresAt(text, at), FROM, until))).toEqual(local.filter((t) => t < until.toISOString()));
  });

  it('fires Unix day numbers on the days they name', () => {
    const days = (text: string) => new Set(scheduleFirings(text, FROM, TO).map((d) => d.getUTCDay()));
    expect(days('0 9 * * 1')).toEqual(new Set([1]));
    expect(days('0 9 * * 1-5')).toEqual(new Set([1, 2, 3, 4, 5]));
    expect(days('30 2 * * 0,6')).toEqual(new Set([0, 6]));
    expect(days('0 0 * * 7')).toEqual(new Set([0]));
    expect(scheduleFirings('0 9 * * 1', FROM, TO)[0]!.toISOString()).toBe('2026-01-05T09:00:00.000Z'); // the first Monday
  });

  it('fires in the minute whatever the second the local tick lands on', () => {
    expect(scheduleFiresAt('0 9 * * MON', new Date('2026-01-05T09:00:59.900Z'))).toBe(true);
    expect(scheduleFiresAt('0 9 * * MON', new Date('2026-01-04T09:00:00Z'))).toBe(false);
  });
});

describe('value sets', () => {
  const FIELDS: readonly (readonly [number, number])[] = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];
  /** One portable field: `*`, a value, a range, or a stepped star or range, as a comma list. */
  const field = (min: number, max: number) =>
    fc
      .array(
        fc.oneof(
          fc.constant('*'),
          fc.integer({ min, max }).map(String),
          fc.tuple(fc.integer({ min, max }), fc.integer({ min, max })).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`),
          fc.integer({ min: 1, max: 70 }).map((n) => `*/${n}`),
          fc.tuple(fc.integer({ min, max }), fc.integer({ min, max }), fc.integer({ min: 1, max: 9 })).map(([a, b, n]) => `${Math.min(a, b)}-${Math.max(a, b)}/${n}`),
        ),
        { minLength: 1, maxLength: 3 },
      )
      .map((items) => items.join(','));

  it('equal what croner reads from the same expression (it is the local clock)', () => {
    const flags = (values: readonly number[], size: number, offset: number) => Array.from({ length: size }, (_, i) => (values.includes(i + offset) ? 1 : 0));
    fc.assert(
      fc.property(fc.tuple(...FIELDS.map(([min, max]) => field(min, max))), fc.boolean(), (fields, dayOfMonth) => {
        // One day field stays '*' (a portable schedule restricts at most one).
        const text = [...fields.slice(0, 2), dayOfMonth ? fields[2] : '*', fields[3], dayOfMonth ? '*' : fields[4]].join(' ');
        let theirs: CronPattern;
        try {
          theirs = new CronPattern(text, 'UTC', { mode: '5-part' });
        } catch {
          // What croner refuses (a step beyond the field's maximum), the config refuses too.
          expect(scheduleProblem(text)).toMatch(/stepping/);
          return;
        }
        const ours = parseSchedule(text);
        expect(flags(ours.minutes, 60, 0)).toEqual(theirs.minute);
        expect(flags(ours.hours, 24, 0)).toEqual(theirs.hour);
        expect(flags(ours.daysOfMonth, 31, 1)).toEqual(theirs.day);
        expect(flags(ours.months, 12, 1)).toEqual(theirs.month);
        expect(flags(ours.daysOfWeek, 7, 0)).toEqual(theirs.dayOfWeek.slice(0, 7).map((flag, i) => (flag || (i === 0 && theirs.dayOfWeek[7]) ? 1 : 0)));
      }),
      { numRuns: 300 },
    );
  });
});
