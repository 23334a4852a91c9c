/** SPEC §5.4: every budget bounded, all problems listed by field path, nothing echoed. */
import { describe, expect, it } from 'vitest';
import { parseConsumerConfig, rateSpacing } from '../../src/consume/config';
import { ConfigError } from '../../src/ground/errors';

const valid = { stream: 'orders', group: 'g', consumer: 'c', runBudgetMs: 60_000, minIdleMs: 120_000 };

function problemsFor(input: object): string[] {
  try {
    parseConsumerConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('expected a ConfigError');
}

describe('consumer config', () => {
  it('accepts a minimal config and derives every key from the stream', () => {
    const config = parseConsumerConfig(valid);
    expect(config.keys).toEqual({
      stream: 'orders',
      dlt: 'orders:dlt',
      markerPrefix: 'orders:dlt:marker:',
      cursor: 'orders:cursor:g',
      publishDedupePrefix: 'orders:pub:',
      defer: 'orders:defer:g',
      flowLease: 'orders:flow:lease:g',
    });
    expect(config.reclaimBatch).toBe(config.batch);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('does not mutate the caller object', () => {
    const input = { ...valid };
    parseConsumerConfig(input);
    expect(input).toEqual(valid);
  });

  it.each([
    ['blockMs', 0],
    ['blockMs', 60_001],
    ['batch', 0],
    ['batch', 10_001],
    ['reclaimBatch', 0],
    ['handlerTimeoutMs', 0],
    ['handlerTimeoutMs', 60_001],
    ['minIdleMs', 0],
    ['markerTtlSeconds', 0],
    ['concurrency', 0],
    ['batch', 1.5],
  ])('rejects %s = %s naming the field', (field, value) => {
    const problems = problemsFor({ ...valid, [field]: value });
    expect(problems.some((p) => p.startsWith(`${field}:`))).toBe(true);
  });

  it('rejects BLOCK 0 explicitly, since Redis would wait forever', () => {
    expect(() => parseConsumerConfig({ ...valid, blockMs: 0 })).toThrow(/blockMs/);
  });

  it('defaults and bounds the reclaim cadence and the byte budget of a round', () => {
    expect(parseConsumerConfig(valid)).toMatchObject({ reclaimEveryRounds: 10, maxRoundBytes: 4 * 1024 * 1024 });
    const problems = problemsFor({ ...valid, reclaimEveryRounds: 0, maxRoundBytes: 1_000 });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['reclaimEveryRounds', 'maxRoundBytes']);
  });

  it('lists every problem at once', () => {
    const problems = problemsFor({ ...valid, stream: 'has space', group: '', batch: 0, blockMs: 0, extra: true });
    expect(problems.map((p) => p.split(':')[0])).toEqual(expect.arrayContaining(['stream', 'group', 'batch', 'blockMs', '']));
  });

  it("states each problem in zod's English words, not a bare 'Invalid input'", () => {
    // zod/mini ships no messages; the library parses with IN_ENGLISH (src/zod-messages.ts).
    expect(problemsFor({ ...valid, batch: 'x', blockMs: 0, extra: true })).toEqual([
      'batch: Invalid input: expected number, received string',
      'blockMs: Too small: expected number to be >=1',
      ': Unrecognized key: "extra"',
    ]);
  });

  it('rejects names over 128 bytes for group and consumer, counting bytes not characters', () => {
    expect(problemsFor({ ...valid, consumer: 'é'.repeat(65) })[0]).toMatch(/^consumer:/);
    expect(() => parseConsumerConfig({ ...valid, consumer: 'é'.repeat(64) })).not.toThrow();
  });

  it('rejects batch × handler timeout above one hour', () => {
    expect(problemsFor({ ...valid, batch: 10_000, handlerTimeoutMs: 361 })[0]).toMatch(/^handlerTimeoutMs: batch × handlerTimeoutMs/);
    expect(() => parseConsumerConfig({ ...valid, batch: 1_000, handlerTimeoutMs: 3_600 })).not.toThrow();
  });

  it('rejects minIdle not above the run budget', () => {
    expect(problemsFor({ ...valid, minIdleMs: 60_000 })[0]).toMatch(/^minIdleMs: must exceed runBudgetMs/);
  });

  describe('combinations that cannot fit (issue 24 item 12)', () => {
    it('accepts the defaults as they are', () => {
      expect(() => parseConsumerConfig({ stream: 'orders', group: 'g', consumer: 'c' })).not.toThrow();
    });

    it('rejects a reclaim whose worst case is over the hour (batch 3,600, reclaimBatch 10,000, 1 s timeout), naming the bound', () => {
      expect(problemsFor({ ...valid, batch: 3_600, reclaimBatch: 10_000, handlerTimeoutMs: 1_000 })).toEqual([
        'reclaimBatch: reclaimBatch × handlerTimeoutMs must be ≤ 3600000 ms (one hour), as batch × handlerTimeoutMs: a round holds up to batch fresh and reclaimBatch reclaimed entries',
      ]);
      expect(() => parseConsumerConfig({ ...valid, batch: 100, reclaimBatch: 3_600, handlerTimeoutMs: 1_000 })).not.toThrow();
      // reclaimBatch defaults to batch: one problem, on the batch rule, not two.
      expect(problemsFor({ ...valid, batch: 10_000, handlerTimeoutMs: 361 })).toHaveLength(1);
    });

    it('rejects a minIdle that a run\'s last settle, up to 500 ms after its deadline, could outlast', () => {
      expect(problemsFor({ ...valid, runBudgetMs: 60_000, minIdleMs: 60_499 })).toEqual([
        "minIdleMs: must exceed runBudgetMs by at least 500 ms (a run's last exchange with Redis, its final settle, may end that long after its deadline), or a live run could have its entries reclaimed by another",
      ]);
      expect(() => parseConsumerConfig({ ...valid, runBudgetMs: 60_000, minIdleMs: 60_500 })).not.toThrow();
    });

    it('rejects a run budget that leaves handlers less than 50 ms after the settle reserve (every run would be refused)', () => {
      expect(problemsFor({ ...valid, runBudgetMs: 1_000, minIdleMs: 2_000, settleReserveMs: 951 })).toEqual([
        'settleReserveMs: must leave at least 50 ms of runBudgetMs for handlers (runBudgetMs − settleReserveMs ≥ 50), or every run is refused as starting too close to its deadline',
      ]);
      expect(() => parseConsumerConfig({ ...valid, runBudgetMs: 1_000, minIdleMs: 2_000, settleReserveMs: 950 })).not.toThrow();
    });

    it('accepts what the run bounds by itself: a handler timeout or a block longer than the run, a budget no batch fills', () => {
      const short = { ...valid, runBudgetMs: 5_000, minIdleMs: 10_000 };
      expect(() => parseConsumerConfig({ ...short, handlerTimeoutMs: 30_000 })).not.toThrow();
      expect(() => parseConsumerConfig({ ...short, blockMs: 60_000 })).not.toThrow();
      expect(() => parseConsumerConfig({ ...valid, batch: 10_000, handlerTimeoutMs: 360, maxRoundBytes: 65_536 })).not.toThrow();
    });

    it('lists every combination problem at once', () => {
      const problems = problemsFor({ ...valid, batch: 100, reclaimBatch: 10_000, handlerTimeoutMs: 1_000, runBudgetMs: 1_000, settleReserveMs: 990, minIdleMs: 1_200 });
      expect(problems.map((p) => p.split(':')[0])).toEqual(['reclaimBatch', 'minIdleMs', 'settleReserveMs']);
    });
  });

  describe('flow leases (SPEC §5.7)', () => {
    it('defaults the limit to 1 and bounds it to 1..=64', () => {
      expect(parseConsumerConfig({ ...valid, flow: {} }).flow).toEqual({ limit: 1, order: 'none' });
      expect(parseConsumerConfig({ ...valid, flow: { limit: 64 } }).flow).toEqual({ limit: 64, order: 'none' });
      expect(problemsFor({ ...valid, flow: { limit: 0 } })).toEqual([expect.stringMatching(/^flow\.limit: /)]);
      expect(problemsFor({ ...valid, flow: { limit: 65 } })).toEqual([expect.stringMatching(/^flow\.limit: /)]);
    });

    it('takes false as off, as when absent', () => {
      expect(parseConsumerConfig({ ...valid, flow: false }).flow).toBe(false);
      expect(() => parseConsumerConfig({ ...valid, flow: false, wait: 'block' })).not.toThrow();
      expect(problemsFor({ ...valid, flow: true })).toEqual([expect.stringMatching(/^flow: /)]);
    });

    it('takes order strict only with limit 1, and no other order', () => {
      expect(parseConsumerConfig({ ...valid, flow: { order: 'strict' } }).flow).toEqual({ limit: 1, order: 'strict' });
      expect(problemsFor({ ...valid, flow: { limit: 2, order: 'strict' } })).toEqual([expect.stringMatching(/^flow\.limit: must be 1 with flow\.order "strict" \(got 2\)/)]);
      expect(problemsFor({ ...valid, flow: { order: 'fifo' } })).toEqual([expect.stringMatching(/^flow\.order: /)]);
    });

    it('takes a share of at least 1 and below the batch, or none', () => {
      expect(parseConsumerConfig({ ...valid, batch: 100, flow: { share: 10 } }).flow).toEqual({ limit: 1, order: 'none', share: 10 });
      expect(parseConsumerConfig({ ...valid, batch: 100, flow: { share: 99 } }).flow).toMatchObject({ share: 99 });
      expect(problemsFor({ ...valid, flow: { share: 0 } })).toEqual([expect.stringMatching(/^flow\.share: /)]);
      expect(problemsFor({ ...valid, flow: { share: 2.5 } })).toEqual([expect.stringMatching(/^flow\.share: /)]);
      expect(problemsFor({ ...valid, batch: 100, flow: { share: 100 } })).toEqual([expect.stringMatching(/^flow\.share: must be below batch \(100\) to cap anything \(got 100\)/)]);
    });

    it('bounds the rate limit: a burst within the limit, at most 100 per ms, and no blocking wait', () => {
      expect(parseConsumerConfig({ ...valid, rateLimit: { limit: 100, perMs: 1_000 } }).rateLimit).toEqual({ limit: 100, perMs: 1_000 });
      expect(rateSpacing({ limit: 100, perMs: 1_000, burst: 11 })).toEqual({ intervalMs: 10, toleranceMs: 100 });
      expect(rateSpacing({ limit: 100, perMs: 1_000 })).toEqual({ intervalMs: 10, toleranceMs: 990 });
      expect(problemsFor({ ...valid, rateLimit: { limit: 10, perMs: 1_000, burst: 11 } })).toEqual([expect.stringMatching(/^rateLimit\.burst: must be at most rateLimit\.limit \(10\)/)]);
      expect(problemsFor({ ...valid, rateLimit: { limit: 101, perMs: 1 } })).toEqual([expect.stringMatching(/^rateLimit\.limit: must be at most 100 per ms/)]);
      expect(() => parseConsumerConfig({ ...valid, rateLimit: { limit: 100, perMs: 1 } })).not.toThrow();
      expect(problemsFor({ ...valid, rateLimit: { limit: 0, perMs: 1_000 } })).toEqual([expect.stringMatching(/^rateLimit\.limit: /)]);
      expect(problemsFor({ ...valid, rateLimit: { limit: 1, perMs: 3_600_001 } })).toEqual([expect.stringMatching(/^rateLimit\.perMs: /)]);
      expect(problemsFor({ ...valid, rateLimit: { limit: 1, perMs: 1_000 }, wait: 'block' })).toEqual([expect.stringMatching(/^wait: must be "sleep" with rateLimit/)]);
    });

    it('takes a rate limit per flow key only with flow on', () => {
      expect(parseConsumerConfig({ ...valid, flow: {}, rateLimit: { key: 'flow', limit: 5, perMs: 1_000 } }).rateLimit).toEqual({ key: 'flow', limit: 5, perMs: 1_000 });
      expect(problemsFor({ ...valid, rateLimit: { key: 'flow', limit: 5, perMs: 1_000 } })).toEqual([expect.stringMatching(/^rateLimit\.key: "flow" needs config flow/)]);
      expect(problemsFor({ ...valid, flow: false, rateLimit: { key: 'flow', limit: 5, perMs: 1_000 } })).toEqual([expect.stringMatching(/^rateLimit\.key: /)]);
      expect(problemsFor({ ...valid, flow: {}, rateLimit: { key: 'tenant', limit: 5, perMs: 1_000 } })).toEqual([expect.stringMatching(/^rateLimit\.key: /)]);
    });

    it('refuses a blocking wait, which would deliver an entry past the claim that leases its key', () => {
      expect(problemsFor({ ...valid, flow: {}, wait: 'block' })).toEqual([expect.stringMatching(/^wait: must be "sleep" with flow/)]);
      expect(() => parseConsumerConfig({ ...valid, flow: {}, wait: 'sleep' })).not.toThrow();
      expect(() => parseConsumerConfig({ ...valid, wait: 'block' })).not.toThrow();
    });
  });

  describe('retry backoff (SPEC §5.6)', () => {
    it('defaults to exponential from minIdleMs, ×2, up to 15 min, jitter 0.2', () => {
      expect(parseConsumerConfig(valid).retry).toEqual({ backoff: 'exponential', baseMs: 120_000, factor: 2, maxMs: 900_000, jitter: 0.2 });
      // A minIdle above the default cap lifts the cap to it rather than refusing a config that set no retry.
      expect(parseConsumerConfig({ ...valid, runBudgetMs: 1_000_000, minIdleMs: 1_200_000 }).retry).toMatchObject({ baseMs: 1_200_000, maxMs: 1_200_000 });
      expect(parseConsumerConfig({ ...valid, retry: { backoff: 'fixed' } }).retry).toEqual({ backoff: 'fixed', baseMs: 120_000, factor: 2, maxMs: 900_000, jitter: 0.2 });
    });

    it.each([
      ['backoff', 'linear'],
      ['baseMs', 0],
      ['baseMs', 86_400_001],
      ['baseMs', 150_000.5],
      ['factor', 1],
      ['factor', 10.5],
      ['maxMs', 86_400_001],
      ['jitter', -0.1],
      ['jitter', 1.01],
      ['unknown', 1],
    ])('rejects retry.%s = %s naming the field', (field, value) => {
      const problems = problemsFor({ ...valid, retry: { [field]: value } });
      expect(problems.some((p) => p.startsWith(field === 'unknown' ? 'retry' : `retry.${field}:`))).toBe(true);
    });

    it('rejects a base below minIdleMs and a cap below the base, naming each', () => {
      expect(problemsFor({ ...valid, retry: { baseMs: 60_000 } })).toEqual([expect.stringMatching(/^retry\.baseMs: must be at least minIdleMs/)]);
      expect(problemsFor({ ...valid, retry: { baseMs: 300_000, maxMs: 200_000 } })).toEqual([expect.stringMatching(/^retry\.maxMs: must be at least retry\.baseMs/)]);
      expect(() => parseConsumerConfig({ ...valid, retry: { backoff: 'exponential', baseMs: 120_000, factor: 3, maxMs: 86_400_000, jitter: 0 } })).not.toThrow();
    });
  });

  it('rejects a marker TTL longer than the DLT retention', () => {
    expect(problemsFor({ ...valid, markerTtlSeconds: 100, dltRetentionSeconds: 99 })[0]).toMatch(/^markerTtlSeconds:/);
  });

  it('rejects keys off the configured hash tag, naming each', () => {
    const problems = problemsFor({ ...valid, stream: 'orders:{o}', keyTag: 'o', keys: { dlt: 'dlt:{x}', cursor: 'cursor', defer: 'defer:{x}' } });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['keys.dlt', 'keys.cursor', 'keys.defer']);
    expect(() => parseConsumerConfig({ ...valid, stream: 'orders:{o}', keyTag: 'o' })).not.toThrow();
  });

  describe('derived key names follow the rule explicit ones do (SPEC §3.4)', () => {
    it('rejects a group with a space: it would be part of the cursor and marker keys', () => {
      expect(problemsFor({ ...valid, group: 'my group' })).toEqual([expect.stringMatching(/^group: must be printable ASCII without spaces/)]);
      // An explicit cursor does not help: every marker key holds the group.
      expect(problemsFor({ ...valid, group: 'my group', keys: { cursor: 'orders:cursor' } })[0]).toMatch(/^group:.*marker key/);
    });

    it('rejects a 256-byte stream whose derived DLT name would be 260 bytes, naming the stream', () => {
      const problems = problemsFor({ ...valid, stream: 's'.repeat(256) });
      expect(problems[0]).toBe('stream: makes the derived DLT name (<stream>:dlt) 260 bytes long; key names are at most 256 bytes');
      expect(problems.every((p) => p.startsWith('stream:'))).toBe(true);
      // The size and gate keys (size-keys.ts) are always derived: a stream leaves room for them.
      expect(() => parseConsumerConfig({ ...valid, stream: 's'.repeat(256), keys: { dlt: 'd', cursor: 'c', markerPrefix: 'm:' } })).toThrow(/longest derived size or gate key/);
      expect(() => parseConsumerConfig({ ...valid, stream: 's'.repeat(220), keys: { dlt: 'd', cursor: 'c', markerPrefix: 'm:' } })).not.toThrow();
    });

    it('checks the derived deferral key <stream>:defer:<group> like the cursor', () => {
      // 100 + 7 + 128 = 235 bytes fits; 128 + 7 + 128 = 263 does not, and a shorter group would fix it.
      const keys = { cursor: 'c', markerPrefix: 'm:' };
      expect(() => parseConsumerConfig({ ...valid, stream: 's'.repeat(100), group: 'g'.repeat(128), keys })).not.toThrow();
      const problems = problemsFor({ ...valid, stream: 's'.repeat(128), group: 'g'.repeat(128), keys });
      expect(problems).toEqual([
        expect.stringMatching(/^group: makes the derived deferral key \(<stream>:defer:<group>\) 263 bytes long/),
        expect.stringMatching(/^group: makes the derived flow ready key \(<stream>:flow:lease:<group>:ready\) 274 bytes long/),
        expect.stringMatching(/^group: makes the derived flow queue key \(<stream>:flow:lease:<group>:queue\) 274 bytes long/),
      ]);
      expect(() => parseConsumerConfig({ ...valid, stream: 's'.repeat(128), group: 'g'.repeat(128), keys: { ...keys, defer: 'd', flowLease: 'f' } })).not.toThrow();
    });

    it('checks the derived flow keys (<stream>:flow:lease:<group>, its :ready set and :queue), blamed on the group while a shorter one fixes it', () => {
      // 110 + 12 + 128 + 6 = 256 bytes fits; 111 does not.
      const keys = { cursor: 'c', markerPrefix: 'm:', defer: 'd' };
      expect(() => parseConsumerConfig({ ...valid, stream: 's'.repeat(110), group: 'g'.repeat(128), keys })).not.toThrow();
      expect(problemsFor({ ...valid, stream: 's'.repeat(111), group: 'g'.repeat(128), keys })).toEqual([
        expect.stringMatching(/^group: makes the derived flow ready key \(<stream>:flow:lease:<group>:ready\) 257 bytes long/),
        expect.stringMatching(/^group: makes the derived flow queue key \(<stream>:flow:lease:<group>:queue\) 257 bytes long/),
      ]);
      // An explicit lease key leaves room for its ready set and queue, or is blamed.
      expect(problemsFor({ ...valid, keys: { flowLease: 'f'.repeat(251) } })).toEqual([
        expect.stringMatching(/^keys\.flowLease: makes the flow ready key/),
        expect.stringMatching(/^keys\.flowLease: makes the flow queue key/),
      ]);
      expect(() => parseConsumerConfig({ ...valid, keys: { flowLease: 'f'.repeat(250) } })).not.toThrow();
    });

    it('blames the group when a shorter one would make the key fit, else the prefix it comes from', () => {
      // <stream>:dlt:marker:<group>:<41-byte entry id>: 6 + 12 + 128 + 1 + 41 = 188 bytes, fits.
      expect(() => parseConsumerConfig({ ...valid, group: 'g'.repeat(128) })).not.toThrow();
      const longStream = { ...valid, stream: 's'.repeat(120), group: 'g'.repeat(100) };
      expect(problemsFor(longStream)).toEqual([expect.stringMatching(/^group: makes the longest marker key .* 274 bytes long/)]);
      const longPrefix = { ...valid, keys: { markerPrefix: 'm'.repeat(250) } };
      expect(problemsFor(longPrefix)).toEqual([expect.stringMatching(/^keys\.markerPrefix: makes the longest marker key/)]);
    });
  });

  it('never echoes the offending value', () => {
    const secretish = 'sk_live_do_not_print';
    const error = (() => {
      try {
        parseConsumerConfig({ ...valid, group: secretish.repeat(10), unexpected: secretish });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toContain('group');
    expect(error?.message).not.toContain(secretish);
  });
});
