/**
 * The retry wait as pure logic (SPEC §5.6): retryAfterMs (the TypeScript twin of claim.lua's
 * retry_after, which test/redis/retry-backoff.test.ts holds to it), a Deferral's delay and its
 * bounds, and the settle call that carries deferrals.
 */
import { describe, expect, it } from 'vitest';
import { parseConsumerConfig } from '../../src/consume/config';
import { retryAfterMs, retryArgs, unitHash, type RetryPolicy } from '../../src/consume/retry';
import { EMPTY_RUN } from '../../src/consume/report';
import { settleCall } from '../../src/consume/settle';
import { runLogLine } from '../../src/deployment/log';
import { logLineProblems } from '../../src/deployment/log-line';
import type { StreamEntry } from '../../src/entry/entry';
import { Deferral, DeferralDelayError, Verdicts, verdictOfThrown } from '../../src/verdict/verdict';

const MIN_IDLE = 60_000;
const exponential: RetryPolicy = { backoff: 'exponential', baseMs: MIN_IDLE, factor: 2, maxMs: 900_000, jitter: 0 };

describe('retryAfterMs', () => {
  it('waits base × factor^(deliveries − 1), capped at maxMs', () => {
    expect([1, 2, 3, 4, 5, 6, 50, 10_000].map((d) => retryAfterMs(exponential, MIN_IDLE, 'x', d))).toEqual([
      60_000, 120_000, 240_000, 480_000, 900_000, 900_000, 900_000, 900_000,
    ]);
  });

  it('waits minIdle for a count below one (given back, never handled) and never less than minIdle', () => {
    expect(retryAfterMs(exponential, MIN_IDLE, 'x', 0)).toBe(MIN_IDLE);
    expect(retryAfterMs({ ...exponential, baseMs: 1 }, MIN_IDLE, 'x', 3)).toBe(MIN_IDLE);
  });

  it('fixed waits its base whatever the count: at minIdle, what every reclaim did before backoff', () => {
    const fixed: RetryPolicy = { ...exponential, backoff: 'fixed', jitter: 0.5 };
    for (const d of [1, 2, 7, 1_000]) expect(retryAfterMs(fixed, MIN_IDLE, `1-${d}`, d)).toBe(MIN_IDLE);
    expect(retryAfterMs({ ...fixed, baseMs: 90_000, jitter: 0 }, MIN_IDLE, 'x', 9)).toBe(90_000);
  });

  it('jitters down by at most the jitter fraction, the same for the same id and count, differently for others', () => {
    const jittered: RetryPolicy = { ...exponential, jitter: 0.25 };
    const waits = Array.from({ length: 200 }, (_, i) => retryAfterMs(jittered, MIN_IDLE, `1796320243443-${i}`, 4));
    for (const wait of waits) {
      expect(wait).toBeGreaterThan(480_000 * 0.75 - 1);
      expect(wait).toBeLessThanOrEqual(480_000);
      expect(Number.isInteger(wait)).toBe(true);
    }
    expect(new Set(waits).size).toBeGreaterThan(150);
    expect(retryAfterMs(jittered, MIN_IDLE, '1796320243443-7', 4)).toBe(waits[7]);
    // The same entry's next attempt draws again.
    expect(unitHash('1796320243443-7', 5)).not.toBe(unitHash('1796320243443-7', 4));
  });

  it('hashes ids to [0, 1) evenly enough to spread a herd', () => {
    const values = Array.from({ length: 1_000 }, (_, i) => unitHash(`${1_796_320_243_443 + i}-0`, 2));
    for (const value of values) expect(value >= 0 && value < 1).toBe(true);
    const quarters = [0, 0, 0, 0];
    for (const value of values) quarters[Math.floor(value * 4)]! += 1;
    for (const count of quarters) expect(count).toBeGreaterThan(150);
  });

  it('passes the policy to the script as Lua reads numbers back exactly', () => {
    expect(retryArgs({ backoff: 'exponential', baseMs: 60_000, factor: 1.5, maxMs: 900_000, jitter: 0.2 })).toEqual(['exponential', '60000', '1.5', '900000', '0.2']);
  });
});

describe('Deferral with a delay', () => {
  it('carries its delay to a retained verdict', () => {
    expect(verdictOfThrown(new Deferral('downstream said 429', { retryAfterMs: 30_000 }))).toEqual({ kind: 'retain', cause: 'deferred', retryAfterMs: 30_000 });
    expect(verdictOfThrown(new Deferral('paused'))).toEqual({ kind: 'retain', cause: 'deferred' });
  });

  it.each([0, -1, 1.5, 86_400_001, Number.NaN, Number.POSITIVE_INFINITY, '100' as unknown as number])('refuses retryAfterMs %s with a typed error naming the field', (value) => {
    let thrown: unknown;
    try {
      new Deferral('x', { retryAfterMs: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DeferralDelayError);
    expect(thrown).toMatchObject({ code: 'DEFERRAL_DELAY_INVALID', field: 'retryAfterMs' });
    expect((thrown as Error).message).toMatch(/retryAfterMs/);
    // Thrown by a handler, that error is transient: the entry stays, without a delay.
    expect(verdictOfThrown(thrown)).toEqual({ kind: 'retain', cause: 'handler_error' });
  });

  it('drops a delay it cannot trust from a Deferral-like value (matched by code)', () => {
    expect(verdictOfThrown({ code: 'DEFERRAL', retryAfterMs: -5 })).toEqual({ kind: 'retain', cause: 'deferred' });
    expect(verdictOfThrown({ code: 'DEFERRAL', retryAfterMs: 1_000 })).toEqual({ kind: 'retain', cause: 'deferred', retryAfterMs: 1_000 });
  });

  it('accepts the longest delay, one day', () => {
    expect(new Deferral('x', { retryAfterMs: 86_400_000 }).retryAfterMs).toBe(86_400_000);
    expect(() => Verdicts.retain('deferred', 0)).toThrow(DeferralDelayError);
  });
});

describe('settle call with deferrals', () => {
  const config = parseConsumerConfig({ stream: 'orders:{o}', group: 'g', consumer: 'c', runBudgetMs: 60_000, minIdleMs: 120_000 });
  const entry = (id: string): StreamEntry => ({ id, fields: new Map(), deliveries: 1, reclaimed: false });

  it('settles a round whose only verdicts are deferrals with a delay, and only those', () => {
    expect(settleCall(config, [{ entry: entry('1-1'), verdict: Verdicts.retain('deferred') }])).toBeUndefined();
    const call = settleCall(config, [
      { entry: entry('1-1'), verdict: Verdicts.retain('deferred', 5_000) },
      { entry: entry('1-2'), verdict: Verdicts.retain('handler_error') },
      { entry: entry('1-3'), verdict: Verdicts.ack() },
      { entry: entry('1-4'), verdict: Verdicts.retain('deferred', 7_000) },
    ]);
    expect(call?.keys).toEqual(['orders:{o}', 'orders:{o}:dlt', 'orders:{o}:defer:g', 'orders:{o}:flow:lease:g', 'orders:{o}:flow:lease:g:ready', 'orders:{o}:flow:lease:g:queue']);
    // The trailing 0: no flow leases returned (settle.lua's flow section).
    expect(call?.args).toEqual(['g', config.markerTtlSeconds, 1, '1-3', 2, '1-1', 5_000, '1-4', 7_000, 0]);
  });
});

describe('the run log line', () => {
  it('carries the next due time as detail, not as a counter, and stays in the schema', () => {
    const poll = { job: 'poll', consumer: 'billing', stream: 'billing:{b}', group: 'g' } as const;
    const line = JSON.parse(runLogLine({ ...poll, report: { ...EMPTY_RUN, nextDueAt: 1_796_320_243_443 } }, { deployment: 'shop', emf: true }));
    expect(line.detail).toEqual({ nextDueAt: 1_796_320_243_443 });
    expect(logLineProblems(line)).toEqual([]);
    expect(JSON.parse(runLogLine({ ...poll, report: EMPTY_RUN }, { deployment: 'shop' }))).not.toHaveProperty('detail');
  });
});
