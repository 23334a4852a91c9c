/**
 * Scheduled delivery on Redis Cluster (3 masters, private): a tagged stream's schedule keys
 * share its slot, so scheduling, the move, listing and cancelling each run as one script on
 * one node; a stream without a hash tag cannot hold a schedule and is refused with a clear
 * error, before anything is sent.
 */
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createPublisher } from '../../src/publish/publisher';
import type { RedisPort } from '../../src/redis/port';
import { cancelScheduled } from '../../src/schedule/cancel';
import { listScheduled } from '../../src/schedule/list';
import { moveDueEvents } from '../../src/schedule/move';
import { createResultConsumer } from '../../src/saga/result-consumer';
import { fastConfig } from '../support/poller';
import { uniquePrefix } from '../support/redis';
import { useClusterPerSuite } from '../support/redis-suite';
import { result } from './saga-fixtures';
import { redisNow, untilRedisTime } from './schedule-fixtures';

const auth = { mode: 'hmac', keyId: 'inv', key: 'cluster-schedule-key-0000000001' } as const;

describe('scheduled delivery on redis cluster (ioredis)', () => {
  let admin: Cluster;
  let port: RedisPort;
  useClusterPerSuite((h) => ({ admin, port } = h));

  it('schedules, lists, cancels and moves on the stream slot, and the consumer verifies what moved', async () => {
    const tag = uniquePrefix();
    const stream = `results:{${tag}}`;
    const publisher = createPublisher({ port, routes: { 'saga.result': stream }, auth, keyTag: tag });
    const soon = (await redisNow(admin)) + 700;
    const [kept, dropped, later] = await publisher.publishBatch([
      { eventType: 'saga.result', eventId: 'r1', payload: JSON.stringify(result('r1')), deliverAt: soon },
      { eventType: 'saga.result', eventId: 'r2', payload: JSON.stringify(result('r2')), deliverAt: soon },
      { eventType: 'saga.result', eventId: 'r3', payload: JSON.stringify(result('r3')), delayMs: 3_600_000 },
    ]);
    expect([kept, dropped, later].map((r) => r!.scheduled?.cancelled)).toEqual([false, false, false]);
    // The record of a scheduled event answers an immediate repeat (publish.lua, same slot).
    expect(await publisher.publish({ eventType: 'saga.result', eventId: 'r1', payload: JSON.stringify(result('r1')) })).toMatchObject({ duplicate: true, entryId: '' });
    expect((await listScheduled(port, stream)).events.map((e) => e.eventId)).toEqual(['r1', 'r2', 'r3']);
    expect(await cancelScheduled(port, stream, 'r2')).toMatchObject({ status: 'cancelled' });
    expect(await admin.get(`${stream}:pub:r2`)).toMatch(/^cancelled@\d+ [0-9a-f]{40}$/);

    await untilRedisTime(admin, soon);
    expect(await moveDueEvents(port, stream)).toEqual({ moved: 1, nextDueMs: later!.scheduled!.deliverAtMs, dropped: 0 });
    expect(await admin.xlen(stream)).toBe(1);

    const producers: string[] = [];
    const consumer = createResultConsumer({
      port,
      config: fastConfig(stream, { keyTag: tag }),
      auth: { mode: 'hmac-keyring', keys: { inv: { producer: 'inventory', key: auth.key } } },
      handler: ({ producer }) => {
        producers.push(producer);
      },
    });
    await consumer.ensureGroup();
    expect(await consumer.run({ mode: 'drain' })).toMatchObject({ acked: 1, authRejected: 0 });
    expect(producers).toEqual(['inventory']);
  });

  it('refuses to schedule on a stream without a hash tag, naming it, and sends nothing', async () => {
    const stream = `untagged-${uniquePrefix()}`;
    // Without dedupe records a route may lack a tag on Cluster (plain XADD): immediate publishes work.
    const publisher = createPublisher({ port, routes: { e: stream }, auth, dedupeWindowSeconds: 0 });
    await expect(publisher.publish({ eventType: 'e', eventId: 'u1', payload: 'x' }, { delayMs: 1_000 })).rejects.toMatchObject({
      code: 'PUBLISH_SCHEDULE_UNSUPPORTED',
      transient: false,
      message: expect.stringContaining(stream),
    });
    expect(await admin.exists(`${stream}:schedule`)).toBe(0);
    expect(publisher.duplicateHints).toBe(0);
    expect((await publisher.publish({ eventType: 'e', eventId: 'u2', payload: 'x' })).entryId).toMatch(/^\d+-\d+$/);
    for (const call of [() => moveDueEvents(port, stream), () => listScheduled(port, stream), () => cancelScheduled(port, stream, 'u1')]) {
      await expect(call()).rejects.toMatchObject({ code: 'CONFIG_INVALID', problems: [{ path: 'stream', message: expect.stringContaining('hash tag') }] });
    }
  });
});
