/**
 * SPEC §7 safe trim: the frontier over every group, and the edge cases where nothing may
 * be deleted. The random-history property lives in trim-property.test.ts.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { RedisPort } from '../../src/redis/port';
import { safeTrim } from '../../src/retention/trim';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';

describe.each(clientKinds)('safe trim over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));

  const addAll = async (n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 1) ids.push((await admin.xadd(stream, '*', 'n', String(i))) as string);
    return ids;
  };
  const remaining = async () => (await admin.xrange(stream, '-', '+')).map(([id]) => id);
  const readAndAck = async (group: string, count: number) => {
    const reply = (await admin.xreadgroup('GROUP', group, 'c', 'COUNT', count, 'STREAMS', stream, '>')) as Array<[string, Array<[string, string[]]>]>;
    const ids = reply[0]![1].map(([id]) => id);
    await admin.xack(stream, group, ...ids);
    return ids;
  };

  it('deletes nothing from a stream that has no groups', async () => {
    const ids = await addAll(3);
    expect(await safeTrim(port, stream)).toEqual({ removed: 0, frontier: undefined, status: 'no_groups', mode: undefined });
    expect(await remaining()).toEqual(ids);
  });

  it('reports a missing stream without creating it', async () => {
    expect(await safeTrim(port, stream)).toEqual({ removed: 0, frontier: undefined, status: 'no_stream', mode: undefined });
    expect(await admin.exists(stream)).toBe(0);
  });

  it('refuses a key that is not a stream, leaving it alone', async () => {
    await admin.set(stream, 'not a stream');
    await expect(safeTrim(port, stream)).rejects.toMatchObject({ code: 'REDIS_COMMAND_FAILED' });
    expect(await admin.get(stream)).toBe('not a stream');
  });

  it('trims up to the last-delivered id of a single fully acked group, keeping that entry', async () => {
    const ids = await addAll(5);
    await admin.xgroup('CREATE', stream, 'g', '0-0');
    await readAndAck('g', 3);
    const result = await safeTrim(port, stream);
    expect(result).toEqual({ removed: 2, frontier: ids[2], status: 'trimmed', mode: 'exact' });
    expect(await remaining()).toEqual(ids.slice(2));
  });

  it('deletes nothing while a group created from 0-0 has never read', async () => {
    const ids = await addAll(4);
    await admin.xgroup('CREATE', stream, 'fast', '0-0');
    await readAndAck('fast', 4);
    await admin.xgroup('CREATE', stream, 'idle', '0-0');
    expect(await safeTrim(port, stream)).toEqual({ removed: 0, frontier: '0-0', status: 'trimmed', mode: 'exact' });
    expect(await remaining()).toEqual(ids);
  });

  it('lets a group created from $ protect only what arrives after it', async () => {
    const ids = await addAll(3);
    await admin.xgroup('CREATE', stream, 'late', '$');
    const later = await addAll(2);
    const result = await safeTrim(port, stream);
    expect(result).toMatchObject({ removed: 2, frontier: ids[2] });
    expect(await remaining()).toEqual([ids[2], ...later]);
  });

  it('stops at the smallest pending id of a group whose PEL is non-empty', async () => {
    const ids = await addAll(6);
    await admin.xgroup('CREATE', stream, 'g', '0-0');
    await admin.xreadgroup('GROUP', 'g', 'c', 'COUNT', 5, 'STREAMS', stream, '>');
    await admin.xack(stream, 'g', ids[0]!, ids[1]!, ids[3]!);
    const result = await safeTrim(port, stream);
    expect(result).toEqual({ removed: 2, frontier: ids[2], status: 'trimmed', mode: 'exact' });
    expect(await remaining()).toEqual(ids.slice(2));
  });

  it('takes the minimum over every group', async () => {
    const ids = await addAll(6);
    await admin.xgroup('CREATE', stream, 'ahead', '0-0');
    await admin.xgroup('CREATE', stream, 'behind', '0-0');
    await readAndAck('ahead', 6);
    await readAndAck('behind', 2);
    await admin.xreadgroup('GROUP', 'behind', 'c', 'COUNT', 2, 'STREAMS', stream, '>');
    expect(await safeTrim(port, stream)).toMatchObject({ removed: 2, frontier: ids[2] });
    expect(await remaining()).toEqual(ids.slice(2));
  });

  it('trims a stream longer than the limit approximately: at most limit entries per call, never at or above the frontier', async () => {
    const ids: string[] = [];
    const pipeline = admin.pipeline();
    for (let i = 0; i < 1_000; i += 1) pipeline.xadd(stream, '*', 'n', String(i));
    for (const [error, id] of (await pipeline.exec())!) {
      expect(error).toBeNull();
      ids.push(id as string);
    }
    await admin.xgroup('CREATE', stream, 'g', '0-0');
    await readAndAck('g', 950);
    const frontier = ids[949]!;

    const calls = [];
    for (let call = 0; call < 5; call += 1) calls.push(await safeTrim(port, stream, { limit: 300 }));

    expect(calls.map((c) => c.frontier)).toEqual(Array(5).fill(frontier));
    for (const call of calls) expect(call.removed).toBeLessThanOrEqual(300);
    expect(calls.slice(0, 3).map((c) => c.mode)).toEqual(['approximate', 'approximate', 'approximate']);
    // Once the stream is no longer than the limit, the trim is exact (and bounded by its length).
    expect(calls.at(-1)).toMatchObject({ mode: 'exact', removed: 0 });
    expect(calls.reduce((sum, c) => sum + c.removed, 0)).toBe(949);
    expect(await remaining()).toEqual(ids.slice(949));
  });

  it('rejects a negative or fractional limit before sending anything', async () => {
    await expect(safeTrim(port, stream, { limit: -1 })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    await expect(safeTrim(port, stream, { limit: 1.5 })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('compares ids as 64-bit numbers, not doubles', async () => {
    // Sequence numbers this large collapse to one double; string comparison must tell them apart.
    const ids = ['5-18446744073709551613', '5-18446744073709551614', '5-18446744073709551615'];
    for (const id of ids) await admin.xadd(stream, id, 'n', id);
    await admin.xgroup('CREATE', stream, 'g', '0-0');
    await admin.xreadgroup('GROUP', 'g', 'c', 'COUNT', 3, 'STREAMS', stream, '>');
    await admin.xack(stream, 'g', ids[0]!);
    expect(await safeTrim(port, stream)).toEqual({ removed: 1, frontier: ids[1], status: 'trimmed', mode: 'exact' });
    expect(await remaining()).toEqual(ids.slice(1));
  });

  it('compares ids numerically across different lengths', async () => {
    const ids = ['9-0', '10-0', '100-0'];
    for (const id of ids) await admin.xadd(stream, id, 'n', id);
    await admin.xgroup('CREATE', stream, 'g', '0-0');
    await readAndAck('g', 3);
    await admin.xgroup('CREATE', stream, 'h', '10-0');
    expect(await safeTrim(port, stream)).toEqual({ removed: 1, frontier: '10-0', status: 'trimmed', mode: 'exact' });
    expect(await remaining()).toEqual(['10-0', '100-0']);
  });
});
