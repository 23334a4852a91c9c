/**
 * Reclaim cadence (SPEC §5.1): a full reclaim on a run's first claim and after a short fresh
 * read; a probe (COUNT reclaimBatch / 10) when only the every-K rule asks for one; a probe
 * that finds anything makes the next claim a full reclaim.
 */
import { describe, expect, it } from 'vitest';
import type { ClaimPlan, ClaimResult } from '../../src/claim';
import { probeCount, ReclaimCadence } from '../../src/reclaim-cadence';

const answer = (plan: ClaimPlan, fresh: number, reclaimed = 0, deleted = 0): ClaimResult => ({
  entries: Array.from({ length: fresh + reclaimed }, () => ({}) as never),
  reclaimed,
  deletedIds: Array.from({ length: deleted }, (_, i) => `0-${i + 1}`),
  nextCursor: plan.reclaim > 0 ? '0-0' : undefined,
  freshRequested: plan.fresh,
  bytes: 0,
});

/** Feeds the cadence `rounds` full fresh reads, each claimed as it asks; returns what it asked for each time. */
function fullRounds(cadence: ReclaimCadence, rounds: number): Array<string | undefined> {
  const asked: Array<string | undefined> = [];
  for (let i = 0; i < rounds; i += 1) {
    const due = cadence.due();
    asked.push(due);
    const plan = { fresh: 100, reclaim: due === undefined ? 0 : 10 };
    cadence.claimed(plan, answer(plan, 100));
  }
  return asked;
}

describe('ReclaimCadence', () => {
  it('reclaims in full first, then probes every K claims while fresh reads fill', () => {
    const cadence = new ReclaimCadence(3);
    expect(fullRounds(cadence, 7)).toEqual(['full', undefined, undefined, 'probe', undefined, undefined, 'probe']);
  });

  it('reclaims in full after a short fresh read', () => {
    const cadence = new ReclaimCadence(10);
    fullRounds(cadence, 2);
    const plan = { fresh: 100, reclaim: 0 };
    cadence.claimed(plan, answer(plan, 99));
    expect(cadence.due()).toBe('full');
  });

  it.each([
    ['reclaimed', 1, 0],
    ['reported deleted', 0, 1],
  ])('reclaims in full right after a probe that %s something', (_, reclaimed, deleted) => {
    const cadence = new ReclaimCadence(2);
    expect(fullRounds(cadence, 2)).toEqual(['full', undefined]);
    expect(cadence.due()).toBe('probe');
    const plan = { fresh: 100, reclaim: 1 };
    cadence.claimed(plan, answer(plan, 100, reclaimed, deleted));
    expect(cadence.due()).toBe('full');
    // A full reclaim that finds something does not repeat: the every-K rule takes over again.
    const full = { fresh: 100, reclaim: 10 };
    cadence.claimed(full, answer(full, 100, 10));
    expect(fullRounds(cadence, 3)).toEqual([undefined, 'probe', undefined]);
  });

  it('sizes a probe to scan at most reclaimBatch PEL entries (XAUTOCLAIM scans COUNT × 10)', () => {
    expect(probeCount(100)).toBe(10);
    expect(probeCount(95)).toBe(10);
    expect(probeCount(5)).toBe(1);
    expect(probeCount(1)).toBe(1);
  });
});
