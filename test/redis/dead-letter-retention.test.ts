/**
 * SPEC §7 DLT retention: records older than the window go (time from the Redis clock and
 * the record's id), younger ones stay; and one retention pass over a stream runs safe trim,
 * DLT retention and the reaper together, in one call (retention.lua), a failing part
 * stopping none of the others.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RedisPort } from '../../src/redis/port';
import { parseRetentionConfig } from '../../src/retention/config';
import { trimDeadLetters } from '../../src/retention/dead-letters';
import { runRetention } from '../../src/retention/run';
import { clientKinds } from '../support/clients';
import { sleepMs } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';

const HOUR_MS = 3_600_000;

describe.each(clientKinds)('dead-letter retention over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let dlt: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(() => {
    dlt = `${stream}:dlt`;
  });

  const redisNowMs = async () => {
    const [seconds, micros] = await admin.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  const record = (id: string) => admin.xadd(dlt, id, 'event_id', `e-${id}`, 'reason', 'poison');
  const remaining = async () => (await admin.xrange(dlt, '-', '+')).map(([id]) => id);

  it('drops records older than the window and keeps younger ones', async () => {
    const now = await redisNowMs();
    const ids = [`${now - 3 * HOUR_MS}-0`, `${now - 2 * HOUR_MS}-5`, `${now - HOUR_MS / 6}-0`];
    for (const id of ids) await record(id);
    const fresh = (await admin.xadd(dlt, '*', 'event_id', 'e-now', 'reason', 'poison')) as string;

    const result = await trimDeadLetters(port, dlt, 3600);

    expect(result.removed).toBe(2);
    expect(result.cutoffMs).toBeGreaterThanOrEqual(now - HOUR_MS);
    expect(await remaining()).toEqual([ids[2], fresh]);
  });

  it('deletes nothing when the window reaches back before the epoch', async () => {
    await record('1-0');
    expect(await trimDeadLetters(port, dlt, 10 ** 11)).toEqual({ removed: 0, cutoffMs: 0 });
    expect(await remaining()).toEqual(['1-0']);
  });

  it('runs safe trim, DLT retention and the reaper in one pass', async () => {
    const now = await redisNowMs();
    await record(`${now - 48 * HOUR_MS}-0`);
    const kept = (await admin.xadd(dlt, '*', 'event_id', 'e-now', 'reason', 'poison')) as string;
    const first = (await admin.xadd(stream, '*', 'n', '1')) as string;
    const second = (await admin.xadd(stream, '*', 'n', '2')) as string;
    await admin.xgroup('CREATE', stream, 'g', '0-0');
    await admin.xreadgroup('GROUP', 'g', 'reader', 'COUNT', 1, 'STREAMS', stream, '>');
    await admin.xack(stream, 'g', first);
    await admin.xgroup('CREATECONSUMER', stream, 'g', 'never-used');

    const config = parseRetentionConfig({ stream, dltRetentionSeconds: 24 * 3600, markerTtlSeconds: 3600, reaper: { idleMs: 24 * HOUR_MS } });
    const report = await runRetention(port, config);

    expect(report.stream).toEqual({ removed: 0, frontier: first, status: 'trimmed', mode: 'exact' });
    expect(report.deadLetters.removed).toBe(1);
    // Nobody has been idle for a day: the reaper keeps everyone.
    expect(report.consumers).toEqual({ deleted: [], busyIdle: 0 });
    expect(await remaining()).toEqual([kept]);
    expect((await admin.xrange(stream, '-', '+')).map(([id]) => id)).toEqual([first, second]);
    expect(await admin.xinfo('CONSUMERS', stream, 'g')).toHaveLength(2);
  });

  it('a part that fails fails the pass, after the others ran: a DLT key of the wrong type', async () => {
    await admin.set(dlt, 'not a stream');
    const first = (await admin.xadd(stream, '*', 'n', '1')) as string;
    const second = (await admin.xadd(stream, '*', 'n', '2')) as string;
    await admin.xgroup('CREATE', stream, 'g', '0-0');
    await admin.xreadgroup('GROUP', 'g', 'reader', 'COUNT', 2, 'STREAMS', stream, '>');
    await admin.xack(stream, 'g', first, second);
    // The reader past the reaper's 1 ms (a condition waited for, not a timed assertion).
    while (Number(((await admin.xinfo('CONSUMERS', stream, 'g')) as Array<Array<string | number>>)[0]![5]) <= 1) await sleepMs(2);

    const config = parseRetentionConfig({ stream, markerTtlSeconds: 3600, reaper: { idleMs: 1 } });
    const error = await runRetention(port, config).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ code: 'REDIS_COMMAND_FAILED', replyCode: 'WRONGTYPE', command: 'script retention (dlt)' });
    // The trim and the reaper ran all the same.
    expect((await admin.xrange(stream, '-', '+')).map(([id]) => id)).toEqual([second]);
    expect(await admin.xinfo('CONSUMERS', stream, 'g')).toEqual([]);
    expect(await admin.get(dlt)).toBe('not a stream');
  });
});
