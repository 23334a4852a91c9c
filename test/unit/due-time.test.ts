/** Due times of scheduled publishes (SPEC §5.6): the two text forms and the option checks, never early. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkDueTime, formatRfc3339, MAX_SCHEDULE_DELAY_MS, parseDelay, parseRfc3339 } from '../../src/schedule/due-time';

describe('Deliver-At (RFC 3339)', () => {
  it.each([
    ['2026-12-24T18:00:00Z', Date.UTC(2026, 11, 24, 18)],
    ['2026-12-24t18:00:00z', Date.UTC(2026, 11, 24, 18)],
    ['2026-12-24T19:30:00+01:30', Date.UTC(2026, 11, 24, 18)],
    ['2026-12-24T16:00:00-02:00', Date.UTC(2026, 11, 24, 18)],
    ['2026-12-24T18:00:00.25Z', Date.UTC(2026, 11, 24, 18, 0, 0, 250)],
    ['2026-12-24T18:00:00.007Z', Date.UTC(2026, 11, 24, 18, 0, 0, 7)],
    // Below a ms: rounded up, never earlier than written.
    ['2026-12-24T18:00:00.0000001Z', Date.UTC(2026, 11, 24, 18, 0, 0, 1)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['1969-12-31T23:59:59Z', -1000],
  ])('reads %s', (text, ms) => {
    expect(parseRfc3339(text)).toBe(ms);
  });

  it.each([
    '2026-12-24', '2026-12-24T18:00:00', '2026-12-24 18:00:00Z', '2026-02-29T00:00:00Z', '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z', '2026-12-24T24:00:00Z', '2026-12-24T23:59:60Z', '2026-12-24T18:00:00+24:00',
    '2026-12-24T18:00Z', '1893456000000', 'tomorrow', '', '2026-12-24T18:00:00.Z',
  ])('refuses %j', (text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });

  it('reads back what it writes, for any instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }), (ms) => {
        expect(parseRfc3339(formatRfc3339(ms))).toBe(ms);
      }),
    );
  });
});

describe('Delay (durations)', () => {
  it.each([
    ['0s', 0],
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['365d', MAX_SCHEDULE_DELAY_MS],
  ])('reads %s', (text, ms) => {
    expect(parseDelay(text)).toBe(ms);
  });

  it.each(['90', '-5s', '1.5s', '5 m', '5M', '1w', 's', '', '9999999999999999d'])('refuses %j', (text) => {
    expect(parseDelay(text)).toBeUndefined();
  });
});

describe('checkDueTime', () => {
  const now = Date.UTC(2026, 11, 1);
  const max = 10_000;

  it('counts a delay from Redis (mode in), rounded up, and names an instant (mode at), rounded up', () => {
    expect(checkDueTime({}, max, now)).toEqual({ ok: true, due: undefined });
    expect(checkDueTime({ delayMs: 1.2 }, max, now)).toEqual({ ok: true, due: { mode: 'in', ms: 2 } });
    expect(checkDueTime({ delayMs: max }, max, now)).toEqual({ ok: true, due: { mode: 'in', ms: max } });
    expect(checkDueTime({ deliverAt: new Date(now + 5_000) }, max, now)).toEqual({ ok: true, due: { mode: 'at', ms: now + 5_000 } });
    expect(checkDueTime({ deliverAt: now + 0.5 }, max, now)).toEqual({ ok: true, due: { mode: 'at', ms: now + 1 } });
    expect(checkDueTime({ deliverAt: -5 }, max, now)).toEqual({ ok: true, due: { mode: 'at', ms: 0 } });
  });

  it.each([
    [{ delayMs: max + 1 }, 'delayMs', 'at most'],
    [{ delayMs: -1 }, 'delayMs', '>= 0'],
    [{ delayMs: Number.POSITIVE_INFINITY }, 'delayMs', 'finite'],
    [{ delayMs: '5s' as unknown as number }, 'delayMs', 'finite'],
    [{ deliverAt: now + max + 1 }, 'deliverAt', 'at most'],
    [{ deliverAt: new Date(Number.NaN) }, 'deliverAt', 'valid Date'],
    [{ deliverAt: '2026-12-24T18:00:00Z' as unknown as number }, 'deliverAt', 'valid Date'],
    [{ deliverAt: now, delayMs: 1 }, 'deliverAt', 'not both'],
  ])('refuses %j naming %s', (options, field, message) => {
    expect(checkDueTime(options, max, now)).toEqual({ ok: false, field, message: expect.stringContaining(message) });
  });
});
