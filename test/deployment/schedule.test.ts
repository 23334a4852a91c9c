/**
 * Issue 12 item 15: one schedule language, the same instants everywhere. For a table of
 * expressions, the local stack's firings (croner) equal EventBridge's and Cloudflare's,
 * each computed by interpreting the MAPPED expression with that platform's documented
 * semantics (platform-cron.ts). Expressions no platform mapping can carry are refused,
 * naming the field.
 */
import { describe, expect, it } from 'vitest';
import { isCronExpression, toCloudflareCron, toEventBridgeCron } from '../../src/deployment/cron';
import { parseSchedule, scheduleFirings, scheduleFiresAt, scheduleProblem } from '../../src/deployment/schedule';
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
