/** Emulated schedules: which minutes a schedule fires in (UTC), with Unix day numbering. */
import { describe, expect, it } from 'vitest';
import { cronMatches, msToNextMinute } from '../../local/cron-match';

const at = (iso: string) => new Date(iso);

describe('cronMatches', () => {
  it.each([
    ['* * * * *', '2026-03-04T05:06:00Z', true],
    ['*/15 * * * *', '2026-03-04T05:30:00Z', true],
    ['*/15 * * * *', '2026-03-04T05:31:00Z', false],
    ['0 3 * * *', '2026-03-04T03:00:00Z', true],
    ['0 3 * * *', '2026-03-04T04:00:00Z', false],
    ['5-10/5 * * * *', '2026-03-04T00:10:00Z', true],
    ['5-10/5 * * * *', '2026-03-04T00:15:00Z', false],
    ['0 0 * * 0', '2026-03-08T00:00:00Z', true], // a Sunday
    ['0 0 * * 7', '2026-03-08T00:00:00Z', true], // 7 is Sunday too
    ['0 0 * * SUN', '2026-03-08T00:00:00Z', true],
    ['0 0 * * 1-5', '2026-03-08T00:00:00Z', false],
    ['0 0 * * MON-FRI', '2026-03-09T00:00:00Z', true], // a Monday
    ['0 0 * * mon-fri', '2026-03-08T00:00:00Z', false],
    ['0 0 1 * *', '2026-03-01T00:00:00Z', true],
    ['0 0 1 * *', '2026-03-02T00:00:00Z', false],
    ['0,30 * * 3 *', '2026-03-04T12:30:00Z', true],
    ['0,30 * * MAR *', '2026-03-04T12:30:00Z', true],
    ['0,30 * * 4 *', '2026-03-04T12:30:00Z', false],
    ['0 3 * * *', '2026-03-04T03:00:42.5Z', true], // a late tick still counts for its minute
  ])('%s at %s → %s', (expression, iso, expected) => {
    expect(cronMatches(expression, at(iso))).toBe(expected);
  });

  it('refuses what defineConfig refuses instead of guessing', () => {
    for (const expression of ['99 99 99 99 99', '0 0 1 * 1', '* * * *']) {
      expect(() => cronMatches(expression, at('2026-03-09T00:00:00Z'))).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    }
  });

  it('waits until the next minute boundary', () => {
    expect(msToNextMinute(Date.parse('2026-03-04T05:06:59.250Z'))).toBe(750);
    expect(msToNextMinute(Date.parse('2026-03-04T05:06:00Z'))).toBe(60_000);
  });
});
