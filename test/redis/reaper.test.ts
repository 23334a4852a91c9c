/**
 * SPEC §7 consumer reaper: idle consumers holding nothing are deleted; a consumer holding
 * pending entries never is, however idle — including one that gained an entry between
 * runs. Checked by reading XINFO CONSUMERS and XPENDING directly.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RedisPort } from '../../src/redis/port';
import { reapConsumers } from '../../src/retention/reaper';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { sleepMs } from '../support/poller';
import { pendingRows } from '../support/redis';

/** Short enough to wait out, long enough that a consumer just used is below it. */
const IDLE_MS = 40;
const FOREVER_MS = 24 * 3_600_000;

describe.each(clientKinds)('consumer reaper over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await admin.xgroup('CREATE', stream, 'g', '0-0', 'MKSTREAM');
  });

  const consumers = async (group = 'g') => {
    const rows = (await admin.xinfo('CONSUMERS', stream, group)) as Array<Array<string | number>>;
    return rows.map((row) => ({ name: String(row[1]), pending: Number(row[3]), idle: Number(row[5]) }));
  };
  const names = async (group = 'g') => (await consumers(group)).map((c) => c.name).sort();
  /** Waits (condition, not a timed assertion) until every listed consumer is idle past IDLE_MS. */
  const waitIdle = async (...who: string[]) => {
    for (;;) {
      const idle = (await consumers()).filter((c) => who.includes(c.name) && c.idle > IDLE_MS);
      if (idle.length === who.length) return;
      await sleepMs(IDLE_MS);
    }
  };
  const deliverTo = async (consumer: string, count: number) => {
    const reply = (await admin.xreadgroup('GROUP', 'g', consumer, 'COUNT', count, 'STREAMS', stream, '>')) as Array<[string, Array<[string]>]>;
    return reply[0]![1].map(([id]) => id);
  };

  it('deletes idle consumers with nothing pending and keeps the ones holding entries', async () => {
    await admin.xadd(stream, '*', 'n', '1');
    await admin.xgroup('CREATECONSUMER', stream, 'g', 'empty');
    const [held] = await deliverTo('holder', 1);
    await waitIdle('empty', 'holder');

    const result = await reapConsumers(port, stream, { idleMs: IDLE_MS, maxPerRun: 100 });

    expect(result).toEqual({ deleted: [{ group: 'g', consumer: 'empty' }], busyIdle: 1 });
    expect(await names()).toEqual(['holder']);
    expect(await pendingRows(admin, stream, 'g')).toMatchObject([{ id: held, consumer: 'holder' }]);
  });

  it('keeps an empty consumer that is not idle long enough', async () => {
    await admin.xgroup('CREATECONSUMER', stream, 'g', 'recent');
    expect(await reapConsumers(port, stream, { idleMs: FOREVER_MS, maxPerRun: 100 })).toEqual({ deleted: [], busyIdle: 0 });
    expect(await names()).toEqual(['recent']);
  });

  it('never deletes a consumer that gained a pending entry between runs', async () => {
    await admin.xgroup('CREATECONSUMER', stream, 'g', 'worker');
    // Run 1: empty, but not idle long enough — kept.
    expect((await reapConsumers(port, stream, { idleMs: FOREVER_MS, maxPerRun: 100 })).deleted).toEqual([]);
    // Between runs it is handed an entry and then goes quiet (e.g. its function timed out).
    await admin.xadd(stream, '*', 'n', '1');
    const [id] = await deliverTo('worker', 1);
    await waitIdle('worker');
    // Run 2: idle past the threshold, but holding an entry — kept, entry still pending to it.
    expect(await reapConsumers(port, stream, { idleMs: IDLE_MS, maxPerRun: 100 })).toEqual({ deleted: [], busyIdle: 1 });
    expect(await names()).toEqual(['worker']);
    expect(await pendingRows(admin, stream, 'g')).toMatchObject([{ id, consumer: 'worker' }]);
    // Once acked and idle again, it is reaped.
    await admin.xack(stream, 'g', id!);
    await waitIdle('worker');
    expect((await reapConsumers(port, stream, { idleMs: IDLE_MS, maxPerRun: 100 })).deleted).toEqual([{ group: 'g', consumer: 'worker' }]);
    expect(await names()).toEqual([]);
  });

  it('reaps every group by default, only the named ones when asked, and at most maxPerRun', async () => {
    await admin.xgroup('CREATE', stream, 'h', '0-0');
    for (const name of ['a', 'b', 'c']) await admin.xgroup('CREATECONSUMER', stream, 'g', name);
    await admin.xgroup('CREATECONSUMER', stream, 'h', 'x');
    await waitIdle('a', 'b', 'c');
    for (;;) {
      const [x] = await consumers('h');
      if (x!.idle > IDLE_MS) break;
      await sleepMs(IDLE_MS);
    }

    const onlyH = await reapConsumers(port, stream, { idleMs: IDLE_MS, maxPerRun: 100, groups: ['h', 'missing'] });
    expect(onlyH.deleted).toEqual([{ group: 'h', consumer: 'x' }]);
    expect(await names()).toEqual(['a', 'b', 'c']);

    const capped = await reapConsumers(port, stream, { idleMs: IDLE_MS, maxPerRun: 2 });
    expect(capped.deleted).toHaveLength(2);
    expect(await names()).toHaveLength(1);
  });

  it('reaps a consumer by the time since it last got an entry, not since its last empty read (Valkey resets idle on those)', async () => {
    await admin.xadd(stream, '*', 'n', '1');
    const [id] = await deliverTo('poller', 1);
    await admin.xack(stream, 'g', id!);
    // It keeps polling an empty stream: on Valkey each empty read resets `idle`, never `inactive`.
    const readNothing = () => admin.xreadgroup('GROUP', 'g', 'poller', 'COUNT', 1, 'STREAMS', stream, '>');
    for (;;) {
      await readNothing();
      const [row] = (await admin.xinfo('CONSUMERS', stream, 'g')) as Array<Array<string | number>>;
      const fields = new Map(Array.from({ length: row!.length / 2 }, (_, i) => [String(row![2 * i]), Number(row![2 * i + 1])]));
      // Redis 7.0 has no `inactive`: its `idle` already is that time.
      if ((fields.get('inactive') ?? fields.get('idle')!) > IDLE_MS) break;
      await sleepMs(IDLE_MS / 4);
    }
    await readNothing();
    expect((await reapConsumers(port, stream, { idleMs: IDLE_MS, maxPerRun: 100 })).deleted).toEqual([{ group: 'g', consumer: 'poller' }]);
    expect(await names()).toEqual([]);
  });

  it('does nothing on a stream that does not exist', async () => {
    expect(await reapConsumers(port, `${stream}:absent`, { idleMs: IDLE_MS, maxPerRun: 10 })).toEqual({ deleted: [], busyIdle: 0 });
    expect(await admin.exists(`${stream}:absent`)).toBe(0);
  });
});
