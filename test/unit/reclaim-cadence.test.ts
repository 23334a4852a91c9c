/**
 * Reclaim cadence (SPEC §5.1): a full reclaim on a run's first claim and after a short fresh
 * read; a probe (COUNT reclaimBatch / 10) when only the every-K rule asks for one; a probe
 * that finds anything makes the next claim a full reclaim; with K = 1 every claim reclaims
 * in full.
 */
import { describe, expect, it } from 'vitest';
import { NOTHING_CLAIMED, type ClaimResult } from '../../src/consume/claim';
import { probeCount, ReclaimCadence, type Reclaim } from '../../src/consume/reclaim-cadence';

const answer = (asked: number, fresh: number, reclaimed = 0, deleted = 0, cut = false): ClaimResult => ({
  ...NOTHING_CLAIMED,
  entries: Array.from({ length: fresh + reclaimed }, () => ({}) as never),
  reclaimed,
  deletedIds: Array.from({ length: deleted }, (_, i) => `0-${i + 1}`),
  freshRequested: asked,
  cut,
});

/** Feeds the cadence `rounds` full fresh reads, each claimed as it asks; returns what it asked for each time. */
function fullRounds(cadence: ReclaimCadence, rounds: number): Reclaim[] {
  const asked: Reclaim[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const due = cadence.due();
    asked.push(due);
    cadence.sending(due);
    cadence.claimed(due, answer(100, 100));
  }
  return asked;
}

describe('ReclaimCadence', () => {
  it('reclaims in full first, then probes every K claims while fresh reads fill', () => {
    const cadence = new ReclaimCadence(3);
    expect(fullRounds(cadence, 7)).toEqual(['full', undefined, undefined, 'probe', undefined, undefined, 'probe']);
  });

  it('reclaims in full on every claim with K = 1 (no probes)', () => {
    expect(fullRounds(new ReclaimCadence(1), 4)).toEqual(['full', 'full', 'full', 'full']);
  });

  it('reclaims in full after a short fresh read, but not after one cut short by the byte budget', () => {
    const cadence = new ReclaimCadence(10);
    fullRounds(cadence, 2);
    cadence.sending(undefined);
    cadence.claimed(undefined, answer(100, 99, 0, 0, true));
    expect(cadence.due()).toBeUndefined();
    cadence.sending(undefined);
    cadence.claimed(undefined, answer(100, 99));
    expect(cadence.due()).toBe('full');
  });

  it('reclaims in full again after a reclaim the byte budget cut short', () => {
    const cadence = new ReclaimCadence(10);
    cadence.sending('full');
    cadence.claimed('full', answer(100, 0, 3, 0, true));
    expect(cadence.due()).toBe('full');
  });

  it.each([
    ['reclaimed', 1, 0],
    ['reported deleted', 0, 1],
  ])('reclaims in full right after a probe that %s something', (_, reclaimed, deleted) => {
    const cadence = new ReclaimCadence(2);
    expect(fullRounds(cadence, 2)).toEqual(['full', undefined]);
    expect(cadence.due()).toBe('probe');
    cadence.sending('probe');
    cadence.claimed('probe', answer(100, 100, reclaimed, deleted));
    expect(cadence.due()).toBe('full');
    // A full reclaim that finds something does not repeat: the every-K rule takes over again.
    cadence.sending('full');
    cadence.claimed('full', answer(100, 100, 10));
    expect(fullRounds(cadence, 3)).toEqual([undefined, 'probe', undefined]);
  });

  it('counts a claim as it goes out: one sent before the claim ahead of it answered still counts toward every K', () => {
    const cadence = new ReclaimCadence(3);
    const asked: Reclaim[] = [];
    // A claim that does not reclaim is answered only after the next one was sent (a run's early
    // exchange); here one that reclaims is answered before the next is planned (as a full
    // reclaim always is; a probe's answer may come after: see the next case).
    let out: Reclaim | 'none' = 'none';
    for (let i = 0; i < 7; i += 1) {
      const due = cadence.due();
      asked.push(due);
      cadence.sending(due);
      if (out !== 'none') cadence.claimed(out, answer(100, 100));
      out = 'none';
      if (due === undefined) out = due;
      else cadence.claimed(due, answer(100, 100));
    }
    expect(asked).toEqual(['full', undefined, undefined, 'probe', undefined, undefined, 'probe']);
  });

  it('acts on a probe answered after the claim sent early behind it: the claim after that one reclaims in full', () => {
    const cadence = new ReclaimCadence(2);
    expect(fullRounds(cadence, 2)).toEqual(['full', undefined]);
    expect(cadence.due()).toBe('probe');
    cadence.sending('probe');
    // The run's early exchange: the next claim is planned and sent before the probe answers.
    expect(cadence.due()).toBeUndefined();
    cadence.sending(undefined);
    cadence.claimed('probe', answer(100, 100, 1));
    // The claim after is planned (and sent early) before the one behind the probe answers.
    expect(cadence.due()).toBe('full');
    cadence.sending('full');
    cadence.claimed(undefined, answer(100, 100));
    cadence.claimed('full', answer(100, 100));
    expect(cadence.due()).toBeUndefined();
  });

  it("keeps a probe's finding when the claim sent early behind the probe answers before the next claim is planned", () => {
    // No claim went out early at the end of the round after the probe's (a held key, a heavy
    // batch): the early claim's full answer lands first, and must not take the finding back.
    const cadence = new ReclaimCadence(10);
    expect(fullRounds(cadence, 1)).toEqual(['full']);
    for (let i = 0; i < 9; i += 1) cadence.sending(cadence.due());
    expect(cadence.due()).toBe('probe');
    cadence.sending('probe');
    expect(cadence.due()).toBeUndefined();
    cadence.sending(undefined);
    cadence.claimed('probe', answer(100, 100, 1));
    cadence.claimed(undefined, answer(100, 100));
    expect(cadence.due()).toBe('full');
    cadence.sending('full');
    cadence.claimed('full', answer(100, 100));
    expect(cadence.due()).toBeUndefined();
  });

  it('asks again for a full reclaim that went out and never answered (a claim refused with NOSCRIPT is claimed again)', () => {
    const cadence = new ReclaimCadence(10);
    expect(cadence.due()).toBe('full');
    cadence.sending('full');
    expect(cadence.due()).toBe('full');
    cadence.sending('full');
    cadence.claimed('full', answer(100, 100));
    expect(cadence.due()).toBeUndefined();
  });

  it('keeps a short read\'s full reclaim when the claim sent early behind it answers with a full read', () => {
    const cadence = new ReclaimCadence(10);
    expect(fullRounds(cadence, 1)).toEqual(['full']);
    cadence.sending(cadence.due());
    cadence.sending(cadence.due());
    cadence.claimed(undefined, answer(100, 40));
    cadence.claimed(undefined, answer(100, 100));
    expect(cadence.due()).toBe('full');
  });

  it('sizes a probe to scan at most reclaimBatch PEL entries (XAUTOCLAIM scans COUNT × 10)', () => {
    expect(probeCount(100)).toBe(10);
    expect(probeCount(95)).toBe(10);
    expect(probeCount(5)).toBe(1);
    expect(probeCount(1)).toBe(1);
  });
});
