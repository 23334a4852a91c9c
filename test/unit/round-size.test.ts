/**
 * Claim sizing (SPEC §5.1 (a)): a claim sent ahead asks only for what the time left covers
 * after the batch in hand; the reclaim and the fresh read share one limit; the byte budget is
 * not estimated here but passed through to claim.lua (its room), which enforces it.
 */
import { describe, expect, it } from 'vitest';
import { parseConsumerConfig } from '../../src/consume/config';
import { RoundSizer, type ClaimRoom } from '../../src/consume/round-size';

const config = (batch: number, reclaimBatch?: number) =>
  parseConsumerConfig({ stream: 's', group: 'g', consumer: 'c', batch, reclaimBatch, handlerTimeoutMs: 100, runBudgetMs: 60_000, minIdleMs: 120_000 });
const room = (over: Partial<ClaimRoom> = {}): ClaimRoom => ({ allowance: 4096, alone: true, freshCap: 10_000, read: 'lua', ...over });

describe('RoundSizer', () => {
  it('claims ahead only once a round was handled, and only what the time after the batch in hand covers', () => {
    const sizer = new RoundSizer(config(100));
    expect(sizer.mayClaimAhead()).toBe(false);
    // What the previous run of the process learned counts as a handled round.
    expect(new RoundSizer(config(100), { perEntryMs: 0.02 }).mayClaimAhead()).toBe(true);
    sizer.observeHandling(100, 100); // 1 ms per entry
    sizer.observeExchange(2);
    expect(sizer.mayClaimAhead()).toBe(true);
    // 150 ms left, 100 entries (100 ms) still to handle, 2 ms exchange: 48 more fit.
    expect(sizer.plan(150, undefined, 100, room())).toMatchObject({ fresh: 48, reclaim: 0 });
    // Not even one entry after the batch in hand: no claim at all.
    expect(sizer.plan(101, undefined, 100, room())).toBeUndefined();
    expect(sizer.plan(1_000, undefined, 0, room())).toMatchObject({ fresh: 100, reclaim: 0 });
  });

  it('passes the byte room through: allowance, alone, how the fresh entries are read', () => {
    const plan = new RoundSizer(config(100)).plan(1_000, 'full', 0, room({ allowance: 12_345, alone: false, read: 'native', gate: 'n1' }));
    expect(plan).toEqual({ fresh: 100, reclaim: 100, allowance: 12_345, alone: false, read: 'native', gate: 'n1' });
  });

  it('bounds the reclaim and the fresh read together by one limit (they land in one reply)', () => {
    const sizer = new RoundSizer(config(500), { perEntryMs: 1 });
    // 128 ms of handling left: 128 entries in all, the reclaim at most half.
    expect(sizer.plan(128, 'full', 0, room())).toMatchObject({ fresh: 64, reclaim: 64 });
    expect(sizer.plan(128, undefined, 0, room())).toMatchObject({ fresh: 128, reclaim: 0 });
    // A small reclaim batch leaves the rest to the fresh read.
    expect(new RoundSizer(config(500, 10), { perEntryMs: 1 }).plan(128, 'full', 0, room())).toMatchObject({ fresh: 118, reclaim: 10 });
    // A probe (the every-K reclaim) asks for reclaimBatch / 10: XAUTOCLAIM scans COUNT × 10 PEL entries.
    expect(sizer.plan(128, 'probe', 0, room())).toMatchObject({ fresh: 78, reclaim: 50 });
    expect(new RoundSizer(config(100)).plan(10_000, 'probe', 0, room())).toMatchObject({ fresh: 100, reclaim: 10 });
    // A limit of one entry still reclaims when a reclaim is due (one beside the fresh one):
    // every claim of such a run is limited to one, so "the next claim" would never come.
    const tight = new RoundSizer(config(500), { perEntryMs: 10 });
    expect(tight.plan(10, 'full', 0, room())).toMatchObject({ fresh: 1, reclaim: 1 });
    expect(tight.plan(10, undefined, 0, room())).toMatchObject({ fresh: 1, reclaim: 0 });
  });

  it('reclaims no more than the cap while entries are held (they must stay within a batch)', () => {
    const sizer = new RoundSizer(config(10, 100));
    expect(sizer.plan(1_000, 'full', 0, room())).toMatchObject({ reclaim: 100 });
    expect(sizer.plan(1_000, 'full', 0, room({ freshCap: 3, reclaimCap: 3 }))).toMatchObject({ fresh: 3, reclaim: 3 });
    expect(sizer.plan(1_000, 'full', 0, room({ freshCap: 0, reclaimCap: 0 }))).toBeUndefined();
  });

  it('asks for about what fits the allowance once claims said what an entry weighs', () => {
    const sizer = new RoundSizer(config(500));
    sizer.observeClaim(10, 10 * 64 * 1024);
    expect(sizer.plan(1_000, undefined, 0, room({ allowance: 4 * 1024 * 1024 }))).toMatchObject({ fresh: 64 });
    // What a run saw is what the next run of the process starts from.
    expect(new RoundSizer(config(500), sizer.observed()).plan(1_000, undefined, 0, room({ allowance: 2 * 1024 * 1024 }))).toMatchObject({ fresh: 32 });
  });

  it('takes no more fresh entries than the cap (held entries), and reads none when told', () => {
    const sizer = new RoundSizer(config(100));
    expect(sizer.plan(1_000, undefined, 0, room({ freshCap: 7 }))).toMatchObject({ fresh: 7, reclaim: 0 });
    expect(sizer.plan(1_000, 'full', 0, room({ freshCap: 0 }))).toMatchObject({ fresh: 0, reclaim: 100, read: 'none' });
    expect(sizer.plan(1_000, undefined, 0, room({ freshCap: 0 }))).toBeUndefined();
  });
});
