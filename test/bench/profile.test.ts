/**
 * The benchmark's `profile` section (bench/profile.ts): medians per scenario, total CPU per
 * entry as Node + Redis, and the pairs of `ratios` taken on total CPU repetition by repetition.
 */
import { describe, expect, it } from 'vitest';
import { profileOf } from '../../bench/profile';
import type { ScenarioResult } from '../../bench/scenarios/types';

const run = (node: number, redis: number, commands: Record<string, { callsPer1k: number; microsPerEntry: number }> = {}): ScenarioResult => ({
  entries: 1_000,
  seconds: 0.1,
  rssPeakMiB: 50,
  extra: { nodeCpuMicrosPerEntry: node, nodeCpuUserMicrosPerEntry: node - 1, nodeCpuSystemMicrosPerEntry: 1, involuntaryContextSwitchesPer1k: 2 },
  redis: { cpuMicrosPerEntry: redis, commands },
});

describe('bench profile', () => {
  it('adds Node and Redis into total CPU per entry, and pairs ratios repetition by repetition rather than dividing medians', () => {
    const figures = new Map<string, ScenarioResult[]>([
      ['scale_4', [run(10, 5), run(20, 10), run(12, 6)]],
      ['scale_raw_verify_4', [run(5, 5), run(7, 8), run(20, 20)]],
    ]);
    const profile = profileOf(figures);
    expect(profile.scenarios.scale_4!.totalCpuMicrosPerEntry).toEqual({ median: 18, min: 15, max: 30 });
    expect(profile.scenarios.scale_4!.coresBusy!.median).toBeCloseTo((10_000 * 18) / 1e6);
    // Per repetition 15/10, 30/15, 18/40 → median 1.5; the ratio of the medians would be 18/15 = 1.2.
    expect(profile.totalCpuRatios.scale_4_over_raw_verify_4).toEqual({ median: 1.5, min: 0.45, max: 2 });
  });

  it('ranks commands by median µs per entry, counting a command missing from a repetition as 0 there', () => {
    const figures = new Map<string, ScenarioResult[]>([
      [
        'product_b100_300B',
        [
          run(10, 5, { evalsha: { callsPer1k: 10, microsPerEntry: 2 }, xautoclaim: { callsPer1k: 1, microsPerEntry: 9 } }),
          run(10, 5, { evalsha: { callsPer1k: 10, microsPerEntry: 3 } }),
          run(10, 5, { evalsha: { callsPer1k: 10, microsPerEntry: 4 } }),
        ],
      ],
    ]);
    const commands = profileOf(figures).scenarios.product_b100_300B!.redisCommands;
    expect(Object.keys(commands)).toEqual(['evalsha', 'xautoclaim']);
    expect(commands.evalsha).toEqual({ callsPer1k: 10, microsPerEntry: 3 });
    expect(commands.xautoclaim).toEqual({ callsPer1k: 0, microsPerEntry: 0 });
  });

  it('leaves out scenarios without Redis figures (a runs.json from before the profile) and pairs missing a side', () => {
    const old: ScenarioResult = { entries: 1_000, seconds: 1, rssPeakMiB: 50 };
    const profile = profileOf(new Map([['product_b100_300B', [old]], ['raw_verify_b100_300B', [run(5, 5)]]]));
    expect(Object.keys(profile.scenarios)).toEqual(['raw_verify_b100_300B']);
    expect(profile.totalCpuRatios).toEqual({});
  });
});
