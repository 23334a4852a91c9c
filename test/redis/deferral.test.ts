/**
 * Deferral with a delay (SPEC §5.6, issue 26 item 2), on both clients: a handler's
 * `new Deferral(reason, { retryAfterMs })` retains the entry with a not-before time in the
 * group's deferral hash (Redis clock, written by the settle), the claim leaves the entry until
 * then — however much longer than minIdle — and the record goes once the entry is taken,
 * settled or found deleted.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { parseConsumerConfig, type ConsumerConfig } from '../../src/consume/config';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { settleDecisions } from '../../src/consume/settle';
import type { RedisPort } from '../../src/redis/port';
import { Deferral, Verdicts } from '../../src/verdict/verdict';
import { clientKinds } from '../support/clients';
import { claimOnce, fastConfig, recordingProcessor, sleepMs } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { append, pendingRows } from '../support/redis';

const MIN_IDLE = 10_000;

describe.each(clientKinds)('deferral with a delay over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));
  beforeEach(async () => {
    await ensureGroup(port, stream, 'g', '0-0');
  });

  const config = (): ConsumerConfig => parseConsumerConfig(fastConfig(stream, { minIdleMs: MIN_IDLE }));
  const redisNow = async (): Promise<number> => {
    const [seconds, micros] = await admin.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  const deferKey = () => config().keys.defer;
  /** A run whose handler defers every entry it sees by `retryAfterMs`. */
  const deferringRun = (retryAfterMs: number) =>
    createPoller({
      port,
      config: fastConfig(stream, { minIdleMs: MIN_IDLE }),
      process: recordingProcessor([], () => Promise.reject(new Deferral('rate limited', { retryAfterMs }))),
    }).run({ mode: 'drain' });
  /** Moves an entry's last delivery into the past (its minIdle and first backoff passed). */
  const idleFor = (id: string, ms: number) => admin.xclaim(stream, 'g', 'c1', 0, id, 'IDLE', ms, 'JUSTID');

  it('keeps a deferred entry pending past minIdle until its not-before time, then reclaims it and drops the record', async () => {
    const id = await append(admin, stream, { event_id: 'e1', payload: 'p1' });
    const before = await redisNow();
    const report = await deferringRun(60_000);
    const after = await redisNow();
    expect(report).toMatchObject({ retained: 1, acked: 0 });
    const notBefore = Number(await admin.hget(deferKey(), id));
    expect(notBefore).toBeGreaterThanOrEqual(before + 60_000);
    expect(notBefore).toBeLessThanOrEqual(after + 60_000);

    // 30 s idle: past minIdle and the first delivery's backoff (10 s), not past the deferral.
    await idleFor(id, 30_000);
    const early = await claimOnce(port, config(), { fresh: 0, reclaim: 10, read: 'none' });
    expect(early.entries).toEqual([]);
    expect(early.nextDueAt).toBe(notBefore);
    expect(await pendingRows(admin, stream, 'g')).toEqual([expect.objectContaining({ id, consumer: 'c1', deliveries: 1 })]);

    // Its time has come (the record says so): reclaimed, and the record is gone.
    await admin.hset(deferKey(), id, String((await redisNow()) - 1));
    const due = await claimOnce(port, config(), { fresh: 0, reclaim: 10, read: 'none' });
    expect(due.entries.map((e) => [e.id, e.deliveries])).toEqual([[id, 2]]);
    expect(await admin.hexists(deferKey(), id)).toBe(0);
  });

  it('redelivers a deferred entry no earlier than the delay it asked for, on the Redis clock', async () => {
    const short = { minIdleMs: 1_300, runBudgetMs: 250, settleReserveMs: 50, handlerTimeoutMs: 100 };
    const id = await append(admin, stream, { event_id: 'e1', payload: 'p1' });
    let deliveries = 0;
    const poller = createPoller({
      port,
      config: fastConfig(stream, short),
      process: recordingProcessor([], () => {
        deliveries += 1;
        return deliveries === 1 ? Promise.reject(new Deferral('downstream said 429', { retryAfterMs: 3_000 })) : 'committed';
      }),
    });
    await poller.run({ mode: 'drain' });
    const notBefore = Number(await admin.hget(poller.config.keys.defer, id));
    let secondAt: number | undefined;
    while (secondAt === undefined) {
      await sleepMs(50);
      await poller.run({ mode: 'drain' });
      // Acked on its second delivery: the first Redis reading after it bounds when that was.
      if (deliveries === 2) secondAt = await redisNow();
    }
    expect(secondAt).toBeGreaterThanOrEqual(notBefore);
    // Redelivered after the deferral, not after minIdle (1.3 s): the record was honoured, then dropped.
    expect(await admin.exists(poller.config.keys.defer)).toBe(0);
    expect(await pendingRows(admin, stream, 'g')).toEqual([]);
  });

  it('drops the record of an entry deleted from the stream while deferred, reporting it deleted', async () => {
    const id = await append(admin, stream, { event_id: 'e1', payload: 'p1' });
    await deferringRun(60_000);
    await idleFor(id, 30_000);
    await admin.xdel(stream, id);
    await admin.hset(deferKey(), id, String((await redisNow()) - 1));
    const claim = await claimOnce(port, config(), { fresh: 0, reclaim: 10, read: 'none' });
    expect(claim.deletedIds).toEqual([id]);
    expect(await admin.hexists(deferKey(), id)).toBe(0);
  });

  it('drops the records of entries acked or dead-lettered, and writes none for an entry no longer pending', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push(await append(admin, stream, { event_id: `e${i}`, payload: `p${i}` }));
    const claim = await claimOnce(port, config(), { fresh: 3, reclaim: 0 });
    const [acked, rejected, gone] = claim.entries;
    for (const id of ids) await admin.hset(deferKey(), id, '1');
    await admin.xack(stream, 'g', gone!.id);
    await admin.hdel(deferKey(), gone!.id);
    const settled = await settleDecisions(port, config(), [
      { entry: acked!, verdict: Verdicts.ack() },
      { entry: rejected!, verdict: Verdicts.deadLetter('poison') },
      // A replayed settle of a deferral whose entry was acked since: no record is left behind.
      { entry: gone!, verdict: Verdicts.retain('deferred', 5_000) },
    ]);
    expect(settled).toMatchObject({ acked: 1, deadLetterRecords: 1, deferred: 0 });
    expect(await admin.exists(deferKey())).toBe(0);
  });

  it('retains, without a delay, an entry whose handler asked for a delay out of bounds', async () => {
    const id = await append(admin, stream, { event_id: 'e1', payload: 'p1' });
    let thrown: unknown;
    const report = await createPoller({
      port,
      config: fastConfig(stream, { minIdleMs: MIN_IDLE }),
      process: recordingProcessor([], () => {
        try {
          throw new Deferral('too long', { retryAfterMs: 86_400_001 });
        } catch (error) {
          thrown = error;
          throw error;
        }
      }),
    }).run({ mode: 'drain' });
    expect(thrown).toMatchObject({ code: 'DEFERRAL_DELAY_INVALID', field: 'retryAfterMs' });
    expect(report).toMatchObject({ retained: 1, deadLettered: 0 });
    expect(await pendingRows(admin, stream, 'g')).toEqual([expect.objectContaining({ id })]);
    expect(await admin.exists(deferKey())).toBe(0);
  });
});
