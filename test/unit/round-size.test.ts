/**
 * Claim sizing (SPEC §5.1 (a) and "Byte budget"): a run's first claim gets the whole byte
 * budget, later ones half (two batches are held at once); a claim sent ahead asks only for
 * what the time left covers after the batch in hand; a probe is worth its round trip only
 * when the assumed entry size, not the batch, would cap the first claim.
 */
import { describe, expect, it } from 'vitest';
import { parseConsumerConfig } from '../../src/config';
import { ASSUMED_ENTRY_BYTES, RoundSizer } from '../../src/round-size';

const config = (batch: number, maxRoundBytes = 4 * 1024 * 1024) =>
  parseConsumerConfig({ stream: 's', group: 'g', consumer: 'c', batch, maxRoundBytes, handlerTimeoutMs: 100, runBudgetMs: 60_000, minIdleMs: 120_000 });

describe('RoundSizer', () => {
  it('gives the first claim the whole budget and every later one half', () => {
    const sizer = new RoundSizer(config(10_000), { entryBytes: 1_000 });
    expect(sizer.byteCap()).toBe(Math.floor((4 * 1024 * 1024) / 1_000));
    sizer.observeEntries(10, 10_000);
    expect(sizer.byteCap()).toBe(Math.floor((2 * 1024 * 1024) / 1_000));
  });

  it('probes only when the assumed entry size would cap the first claim', () => {
    expect(new RoundSizer(config(100)).assumptionLimits()).toBe(false);
    expect(new RoundSizer(config(500)).assumptionLimits()).toBe(true);
    expect(new RoundSizer(config(500)).byteCap()).toBe((4 * 1024 * 1024) / ASSUMED_ENTRY_BYTES);
    // A size remembered from an earlier run, or probed, replaces the assumption.
    expect(new RoundSizer(config(500), { entryBytes: 300 }).assumptionLimits()).toBe(false);
    const probed = new RoundSizer(config(500));
    probed.assumeEntryBytes(300);
    expect(probed.plan(10_000, 'full')).toEqual({ fresh: 500, reclaim: 500 });
  });

  it('claims ahead only once a round was handled, and only what the time after the batch in hand covers', () => {
    const sizer = new RoundSizer(config(100), { entryBytes: 300 });
    expect(sizer.mayClaimAhead()).toBe(false);
    // What the previous run of the process learned counts as a handled round.
    expect(new RoundSizer(config(100), { entryBytes: 300, perEntryMs: 0.02 }).mayClaimAhead()).toBe(true);
    sizer.observeEntries(100, 30_000);
    sizer.observeHandling(100, 100); // 1 ms per entry
    sizer.observeExchange(2);
    expect(sizer.mayClaimAhead()).toBe(true);
    // 150 ms left, 100 entries (100 ms) still to handle, 2 ms exchange: 48 more fit.
    expect(sizer.plan(150, undefined, 100)).toEqual({ fresh: 48, reclaim: 0 });
    // Not even one entry after the batch in hand: no claim at all.
    expect(sizer.plan(101, undefined, 100)).toBeUndefined();
    expect(sizer.plan(1_000, undefined, 0)).toEqual({ fresh: 100, reclaim: 0 });
  });

  it('bounds the reclaim and the fresh read together by one limit (one reply under the byte budget)', () => {
    // 32 KiB entries, 4 MiB budget: the first reply may carry 128 entries in all.
    const sizer = new RoundSizer(config(500), { entryBytes: 32 * 1024 });
    expect(sizer.plan(10_000, 'full')).toEqual({ fresh: 64, reclaim: 64 });
    expect(sizer.plan(10_000, undefined)).toEqual({ fresh: 128, reclaim: 0 });
    // A small reclaim batch leaves the rest to the fresh read.
    const small = new RoundSizer(parseConsumerConfig({ stream: 's', group: 'g', consumer: 'c', batch: 500, reclaimBatch: 10, maxRoundBytes: 4 * 1024 * 1024, handlerTimeoutMs: 100, runBudgetMs: 60_000, minIdleMs: 120_000 }), { entryBytes: 32 * 1024 });
    expect(small.plan(10_000, 'full')).toEqual({ fresh: 118, reclaim: 10 });
    // A probe (the every-K reclaim) asks for reclaimBatch / 10: XAUTOCLAIM scans COUNT × 10 PEL entries.
    expect(sizer.plan(10_000, 'probe')).toEqual({ fresh: 78, reclaim: 50 });
    expect(new RoundSizer(config(100), { entryBytes: 300 }).plan(10_000, 'probe')).toEqual({ fresh: 100, reclaim: 10 });
    // A limit of one entry still reclaims when a reclaim is due (one beside the fresh one):
    // every claim of such a run is limited to one, so "the next claim" would never come.
    const tight = new RoundSizer(config(500), { entryBytes: 4 * 1024 * 1024 });
    expect(tight.plan(10_000, 'full')).toEqual({ fresh: 1, reclaim: 1 });
    expect(tight.plan(10_000, 'probe')).toEqual({ fresh: 1, reclaim: 1 });
    expect(tight.plan(10_000, undefined)).toEqual({ fresh: 1, reclaim: 0 });
  });
});
