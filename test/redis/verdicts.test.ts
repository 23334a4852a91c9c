/**
 * SPEC §4: every verdict row that needs no signature, checked by reading Redis (PEL, DLT,
 * marker) rather than trusting the report.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { markerKeyFor } from '../../src/entry/marker-key';
import { createPoller, type Poller } from '../../src/consume/poller';
import { createProcessor, jsonPayload } from '../../src/consume/processor';
import type { RedisPort } from '../../src/redis/port';
import { Deferral, Rejection, type HandlerOutcome } from '../../src/verdict/verdict';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { append, dltRecords, pendingIds, pendingRows } from '../support/redis';

const orderSchema = z.object({ order: z.string() });
type Behaviour = (payload: { order: string }) => Promise<HandlerOutcome> | HandlerOutcome;

describe.each(clientKinds)('verdicts over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let behaviour: Behaviour;
  let poller: Poller;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'orders');
  beforeEach(async () => {
    behaviour = () => 'committed';
    poller = createPoller({
      port,
      config: { stream, group: 'g', consumer: 'c1', handlerTimeoutMs: 200, runBudgetMs: 5_000, minIdleMs: 10_000, settleReserveMs: 50 },
      process: createProcessor(jsonPayload(orderSchema), ({ payload }) => behaviour(payload)),
    });
    await poller.ensureGroup();
  });

  const runOnce = () => poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });
  const dlt = () => poller.config.keys.dlt;
  const markerOf = (entryId: string) => markerKeyFor(poller.config.keys, 'g', entryId);

  it('acks an entry whose handler committed', async () => {
    await append(admin, stream, { event: 'order.placed', event_id: 'e1', payload: '{"order":"o1"}' });
    const report = await runOnce();
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    expect(await admin.xlen(dlt())).toBe(0);
    expect(report.acked).toBe(1);
  });

  it('acks an entry the inbox reports as duplicate', async () => {
    behaviour = () => 'duplicate';
    await append(admin, stream, { event_id: 'e1', payload: '{"order":"o1"}' });
    await runOnce();
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    expect(await admin.xlen(dlt())).toBe(0);
  });

  it.each([
    ['a missing payload', { event_id: 'e1' }, 'payload_missing'],
    ['an undecodable payload', { event_id: 'e1', payload: '{not json' }, 'payload_undecodable'],
    ['a payload failing its schema', { event_id: 'e1', payload: '{"order":7}' }, 'payload_schema_invalid'],
    ['a missing event_id', { payload: '{"order":"o1"}' }, 'event_id_missing'],
    ['an event_id with spaces', { event_id: 'e 1', payload: '{"order":"o1"}' }, 'event_id_invalid'],
  ])('dead-letters %s with DLT record, marker and ack', async (_, fields, reason) => {
    const id = await append(admin, stream, { event: 'order.placed', ...fields });
    const report = await runOnce();
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    const [record] = await dltRecords(admin, dlt());
    expect(record).toMatchObject({ reason, source_stream: stream, source_entry_id: id, group: 'g', deliveries: '1' });
    expect(Number(record!.dead_lettered_at)).toBeGreaterThan(Date.now() - 60_000);
    for (const [name, value] of Object.entries(fields)) expect(record![`orig_${name}`]).toBe(value);
    expect(record!.orig_event).toBe('order.placed');
    const marker = markerOf(id);
    expect(await admin.get(marker)).toBe(id);
    expect(await admin.ttl(marker)).toBeGreaterThan(0);
    expect(report.deadLettered).toBe(1);
  });

  it('dead-letters a handler Rejection with its reason', async () => {
    behaviour = () => {
      throw new Rejection('order_unknown');
    };
    const id = await append(admin, stream, { event_id: 'e1', payload: '{"order":"o1"}' });
    await runOnce();
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    expect((await dltRecords(admin, dlt()))[0]).toMatchObject({ reason: 'order_unknown', event_id: 'e1', orig_payload: '{"order":"o1"}' });
    expect(await admin.exists(markerOf(id))).toBe(1);
  });

  it.each([
    ['throws an ordinary error', () => Promise.reject(new Error('db unreachable'))],
    ['throws a Deferral', () => Promise.reject(new Deferral('saga paused'))],
    ['exceeds its timeout', () => new Promise<HandlerOutcome>(() => {})],
    ['throws a Rejection-like object with a malformed reason', () => Promise.reject({ code: 'REJECTION', reason: 'Bad Reason' })],
  ])('retains an entry whose handler %s, however many deliveries', async (_, fn) => {
    behaviour = fn as Behaviour;
    const id = await append(admin, stream, { event_id: 'e1', payload: '{"order":"o1"}' });
    const report = await runOnce();
    expect(report.retained).toBe(1);
    // Redeliver it many times: transient failures never turn into dead letters.
    await admin.xclaim(stream, 'g', 'c1', 0, id, 'RETRYCOUNT', 50);
    for (let i = 0; i < 3; i += 1) {
      await admin.xclaim(stream, 'g', 'c1', 0, id, 'IDLE', 86_400_000); // idle past minIdle and the longest backoff again
      const again = await runOnce();
      expect(again).toMatchObject({ reclaimed: 1, retained: 1, deadLettered: 0 });
    }
    expect(await pendingIds(admin, stream, 'g')).toEqual([id]);
    expect((await pendingRows(admin, stream, 'g'))[0]!.deliveries).toBeGreaterThan(50);
    expect(await admin.xlen(dlt())).toBe(0);
    expect(await admin.exists(markerOf('e1'))).toBe(0);
  });

  it('reports reclaimed entries and their delivery counts to the handler', async () => {
    const seen: number[] = [];
    poller = createPoller({
      port,
      config: { ...poller.config, keys: undefined, reclaimBatch: undefined, minIdleMs: 6_000, stream, consumer: 'c2' } as never,
      process: createProcessor(jsonPayload(orderSchema), ({ deliveries }) => {
        seen.push(deliveries);
      }),
    });
    const id = await append(admin, stream, { event_id: 'e1', payload: '{"order":"o1"}' });
    await admin.xreadgroup('GROUP', 'g', 'c1', 'STREAMS', stream, '>');
    // Make it look idle long enough to reclaim.
    await admin.xclaim(stream, 'g', 'c1', 0, id, 'IDLE', 60_000);
    const report = await poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });
    expect(report.reclaimed).toBe(1);
    expect(seen).toEqual([3]);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });
});
