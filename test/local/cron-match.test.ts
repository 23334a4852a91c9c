/** Emulated schedules: which minutes a 5-field cron expression fires in (UTC). */
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
    ['0 0 * * 1-5', '2026-03-08T00:00:00Z', false],
    ['0 0 1 * 1', '2026-03-09T00:00:00Z', true], // both day fields restricted: either matches
    ['0 0 1 * 1', '2026-03-10T00:00:00Z', false],
    ['0,30 * * 3 *', '2026-03-04T12:30:00Z', true],
    ['0,30 * * 4 *', '2026-03-04T12:30:00Z', false],
  ])('%s at %s → %s', (expression, iso, expected) => {
    expect(cronMatches(expression, at(iso))).toBe(expected);
  });

  it('waits until the next minute boundary', () => {
    expect(msToNextMinute(Date.parse('2026-03-04T05:06:59.250Z'))).toBe(750);
    expect(msToNextMinute(Date.parse('2026-03-04T05:06:00Z'))).toBe(60_000);
  });
});
