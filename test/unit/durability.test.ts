/**
 * The durability option (src/redis/durability.ts): which wait commands it sends, how their
 * replies read, and where it is refused by config — REST, waits longer than the publish's
 * or the settle's time. The waits against real replicas are test/servers/durability*.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseConsumerConfig } from '../../src/consume/config';
import { ConfigError, RedisCommandError } from '../../src/ground/errors';
import { parsePublisherConfig } from '../../src/publish/config';
import { durabilityCommands, durabilityOutcome, durabilitySchema, durabilityTransportProblems, type DurabilityInput } from '../../src/redis/durability';

const parse = (input: DurabilityInput) => durabilitySchema.parse(input);
const commandsOf = (input: DurabilityInput) => durabilityCommands(parse(input)).map((c) => [c.name, ...c.args]);

function problems(run: () => unknown): Array<{ path: string; message: string }> {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('durability commands', () => {
  it('waits for AOFs with WAITAOF and for replicas beyond those with WAIT', () => {
    expect(commandsOf({ primaryAof: true })).toEqual([['WAITAOF', 1, 0, 1500]]);
    expect(commandsOf({ replicaAof: 2, timeoutMs: 300 })).toEqual([['WAITAOF', 0, 2, 300]]);
    expect(commandsOf({ replicas: 1, timeoutMs: 300 })).toEqual([['WAIT', 1, 300]]);
    // An fsync on a replica implies it received the write: WAIT only for replicas beyond those.
    expect(commandsOf({ primaryAof: true, replicaAof: 1, replicas: 1 })).toEqual([['WAITAOF', 1, 1, 1500]]);
    expect(commandsOf({ primaryAof: true, replicaAof: 1, replicas: 2, timeoutMs: 100 })).toEqual([
      ['WAITAOF', 1, 1, 100],
      ['WAIT', 2, 100],
    ]);
  });

  it('refuses an option that asks for nothing, or for bounds out of range', () => {
    expect(durabilitySchema.safeParse({}).success).toBe(false);
    expect(durabilitySchema.safeParse({ replicas: -1 }).success).toBe(false);
    expect(durabilitySchema.safeParse({ replicas: 1, timeoutMs: 0 }).success).toBe(false);
    expect(durabilitySchema.safeParse({ replicas: 1, unknown: true }).success).toBe(false);
  });
});

describe('durability outcome', () => {
  const both = parse({ primaryAof: true, replicaAof: 1, replicas: 2, timeoutMs: 200 });

  it('is confirmed only when every count was reached', () => {
    expect(durabilityOutcome(both, [[1, 1], 2])).toEqual({
      confirmed: true,
      detail: 'WAITAOF: primary AOF 1/1, replica AOFs 1/1 within 200 ms; WAIT: replicas 2/2 within 200 ms',
    });
    expect(durabilityOutcome(both, [[1, 0], 2])).toMatchObject({ confirmed: false, detail: expect.stringContaining('replica AOFs 0/1') });
    expect(durabilityOutcome(both, [[0, 1], 2])).toMatchObject({ confirmed: false, detail: expect.stringContaining('primary AOF 0/1') });
    expect(durabilityOutcome(both, [[1, 1], 1])).toMatchObject({ confirmed: false, detail: expect.stringContaining('replicas 1/2') });
    // More than asked is fine.
    expect(durabilityOutcome(parse({ replicas: 1 }), [3]).confirmed).toBe(true);
  });

  it('is not confirmed by an error reply or a missing reply, and says which', () => {
    const refused = new RedisCommandError('WAITAOF', 'ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.');
    expect(durabilityOutcome(both, [refused, 2])).toEqual({
      confirmed: false,
      detail: 'WAITAOF refused: ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.; WAIT: replicas 2/2 within 200 ms',
    });
    expect(durabilityOutcome(both, [[1, 1]])).toMatchObject({ confirmed: false, detail: expect.stringContaining('WAIT not answered') });
  });
});

describe('where durability is refused by config', () => {
  const routes = { 'order.placed': 'orders' };
  const auth = { mode: 'exclusive-stream', producer: 'p' };

  it('over REST, naming the option', () => {
    expect(durabilityTransportProblems(parse({ replicas: 1 }), 'tcp', 'durability')).toEqual([]);
    expect(durabilityTransportProblems(undefined, 'rest', 'durability')).toEqual([]);
    const [problem] = durabilityTransportProblems(parse({ replicas: 1 }), 'rest', 'publishApi.durability');
    expect(problem).toMatchObject({ path: 'publishApi.durability', message: expect.stringContaining('no WAIT or WAITAOF') });
    expect(problems(() => parsePublisherConfig({ routes, auth, durability: { replicas: 1 } }, { cluster: false, transport: 'rest' }))).toEqual([
      expect.objectContaining({ path: 'durability' }),
    ]);
  });

  it('for a publisher whose waits would outlast its timeoutMs', () => {
    expect(() => parsePublisherConfig({ routes, auth, durability: { replicas: 1, timeoutMs: 1000 } }, { cluster: false })).not.toThrow();
    const config = parsePublisherConfig({ routes, auth, durability: { replicas: 1, timeoutMs: 1000 } }, { cluster: false });
    expect(config.durability).toEqual({ primaryAof: false, replicaAof: 0, replicas: 1, timeoutMs: 1000 });
    expect(Object.isFrozen(config.durability)).toBe(true);
    // Two waits of 3 s each cannot end within a publish of 5 s.
    expect(problems(() => parsePublisherConfig({ routes, auth, durability: { primaryAof: true, replicas: 1, timeoutMs: 3000 } }, { cluster: false }))).toEqual([
      expect.objectContaining({ path: 'durability.timeoutMs', message: expect.stringContaining('6000 ms') }),
    ]);
  });

  it('for a consumer whose waits would outlast its settleReserveMs', () => {
    const base = { stream: 's', group: 'g', consumer: 'c' };
    expect(parseConsumerConfig({ ...base, settleReserveMs: 2000, durability: { replicaAof: 1 } }).durability).toMatchObject({ replicaAof: 1, timeoutMs: 1500 });
    expect(problems(() => parseConsumerConfig({ ...base, durability: { replicaAof: 1 } }))).toEqual([
      expect.objectContaining({ path: 'durability.timeoutMs', message: expect.stringContaining('settleReserveMs (500 ms)') }),
    ]);
    expect(problems(() => parseConsumerConfig({ ...base, durability: {} }))).toEqual([expect.objectContaining({ path: 'durability' })]);
  });
});
