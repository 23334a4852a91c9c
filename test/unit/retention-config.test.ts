/** SPEC §5.4/§7: retention config — the DLT window may not be shorter than the marker TTL. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/ground/errors';
import { parseRetentionConfig } from '../../src/retention/config';

function problemsFor(input: object): string[] {
  try {
    parseRetentionConfig(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    return (error as ConfigError).problems.map((p) => `${p.path}: ${p.message}`);
  }
  throw new Error('expected a ConfigError');
}

describe('retention config', () => {
  it('rejects a stream whose derived DLT name would be too long, naming the stream', () => {
    expect(problemsFor({ stream: 's'.repeat(256) })).toEqual([expect.stringMatching(/^stream: makes the derived DLT name .* 260 bytes long/)]);
    expect(() => parseRetentionConfig({ stream: 's'.repeat(256), keys: { dlt: 'd' } })).not.toThrow();
  });

  it('derives the DLT name from the stream and fills defaults', () => {
    const config = parseRetentionConfig({ stream: 'orders' });
    expect(config).toEqual({
      stream: 'orders',
      dlt: 'orders:dlt',
      dltRetentionSeconds: 14 * 24 * 3600,
      markerTtlSeconds: 7 * 24 * 3600,
      trimLimit: 10_000,
      reaper: { idleMs: 24 * 3_600_000, maxPerRun: 1_000, groups: undefined },
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.reaper)).toBe(true);
  });

  it('accepts a window equal to the marker TTL and an overridden DLT', () => {
    const config = parseRetentionConfig({ stream: 'o', keys: { dlt: 'o:dead' }, dltRetentionSeconds: 60, markerTtlSeconds: 60, reaper: { groups: ['g'] } });
    expect(config).toMatchObject({ dlt: 'o:dead', dltRetentionSeconds: 60, reaper: { groups: ['g'] } });
  });

  it('rejects a window shorter than the marker TTL', () => {
    expect(problemsFor({ stream: 'o', dltRetentionSeconds: 59, markerTtlSeconds: 60 })).toEqual([
      'dltRetentionSeconds: must not be shorter than markerTtlSeconds: a marker must never outlive the evidence it stands for',
    ]);
  });

  it('lists every field problem at once without echoing values', () => {
    const problems = problemsFor({ stream: 'bad name-secret42', dltRetentionSeconds: 0, reaper: { idleMs: -1, maxPerRun: 0, extra: 1 } });
    expect(problems.map((p) => p.split(':')[0])).toEqual(
      expect.arrayContaining(['stream', 'dltRetentionSeconds', 'reaper.idleMs', 'reaper.maxPerRun', 'reaper']),
    );
    expect(problems.join('\n')).not.toMatch(/secret42/);
  });

  it('requires the stream and DLT to carry the key tag when one is set', () => {
    expect(parseRetentionConfig({ stream: 'o:{t}', keyTag: 't' }).dlt).toBe('o:{t}:dlt');
    expect(problemsFor({ stream: 'o:{t}', keyTag: 't', keys: { dlt: 'dead' } })).toEqual([
      'keys.dlt: must carry the hash tag {t} so every key shares one Cluster slot',
    ]);
  });
});
