/**
 * Scheduled delivery (SPEC §5.6), end to end against a real Redis over both clients: a
 * scheduled event stays out of its stream until its due time by the Redis clock, is moved
 * in exactly once however many movers race, byte for byte (signature included, so a
 * consumer accepts it), with its size recorded as every writer records it; cancel and the
 * move never both win; publish dedupe covers scheduled events. What Redis holds is read back
 * directly, never taken from a report.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createSignedProcessor } from '../../src/admission/signed-processor';
import { createPoller } from '../../src/consume/poller';
import { rawPayload } from '../../src/consume/processor';
import { sizeKeys } from '../../src/entry/size-keys';
import { schedulePublishScript } from '../../src/generated/lua-scripts';
import { probeBacklog } from '../../src/probes/backlog';
import { prepareEntry } from '../../src/publish/entry-fields';
import { createPublisher, type PublisherOptions } from '../../src/publish/publisher';
import { meterPort } from '../../src/redis/metered';
import type { RedisPort } from '../../src/redis/port';
import { cancelScheduled } from '../../src/schedule/cancel';
import { scheduleKeys } from '../../src/entry/schedule-keys';
import { listScheduled } from '../../src/schedule/list';
import { moveDueEvents } from '../../src/schedule/move';
import { clientKinds } from '../support/clients';
import { fastConfig } from '../support/poller';
import { useRedisPerTest } from '../support/redis-suite';
import { idMillis, redisNow, scheduleOf, sleep, untilRedisTime } from './schedule-fixtures';
import { entriesOf } from './stream-entries';

const KEY = 'scheduled-delivery-signing-key-01';
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const HMAC = { mode: 'hmac', keyId: 'k1', key: KEY } as const;
/** Bytes a REST client can carry (UTF-8, multibyte, a BOM) and, over TCP, bytes no decoder would keep. */
const UTF8_PAYLOAD = '\ufeff{"ü":"€ 𝄞","n":1}\u0000';
/**
 * How far ahead "soon" events are due: past the publish that schedules them even on a loaded
 * machine (an event whose due time has passed when Redis receives it is appended at once).
 */
const SOON_MS = 700;
const BINARY_PAYLOAD = Uint8Array.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x1b, 0x80, 0x00, 0x0a, 0x0d, 0x22, 0x5c]);

describe.each(clientKinds)('scheduled delivery over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'orders');

  const publisherWith = (overrides: Partial<PublisherOptions> = {}) => createPublisher({ port, routes: { 'order.placed': stream }, auth: HMAC, ...overrides });
  const event = (eventId: string, payload: Uint8Array | string = `{"id":"${eventId}"}`) => ({ eventType: 'order.placed', eventId, payload });
  const move = (maxMoved?: number, on: RedisPort = port) => moveDueEvents(on, stream, { maxMoved });

  it('keeps a delayed event out of the stream, due by the Redis clock at publish plus the delay', async () => {
    const before = await redisNow(admin);
    const result = await publisherWith().publish({ ...event('e1'), traceparent: TP }, { delayMs: 60_000 });
    const after = await redisNow(admin);
    expect(result).toMatchObject({ eventId: 'e1', stream, entryId: '', duplicate: false, scheduled: { cancelled: false } });
    expect(result.scheduled!.deliverAtMs).toBeGreaterThanOrEqual(before + 60_000);
    expect(result.scheduled!.deliverAtMs).toBeLessThanOrEqual(after + 60_000);
    expect(result.scheduled!.dueInMs).toBeGreaterThan(59_000);
    expect(await admin.exists(stream)).toBe(0);
    expect((await scheduleOf(admin, stream)).due).toEqual(new Map([['e1', result.scheduled!.deliverAtMs]]));

    // Not due: the move appends nothing and reports when the next one is.
    expect(await move()).toEqual({ moved: 0, nextDueMs: result.scheduled!.deliverAtMs, dropped: 0 });
    expect(await admin.exists(stream)).toBe(0);
  });

  it('appends a scheduled event once, not before its due time, with the exact fields in their order', async () => {
    const payload = port.transport === 'rest' ? UTF8_PAYLOAD : BINARY_PAYLOAD;
    const publisher = publisherWith();
    const dueAt = (await redisNow(admin)) + SOON_MS;
    const scheduled = { ...event('e1', payload), traceparent: TP, deliverAt: dueAt };
    await publisher.publish(scheduled);

    // Movers called from before the due time until it moves: it moves once, at or after it.
    let moved = 0;
    while (moved === 0) {
      const result = await move();
      moved += result.moved;
      if (moved === 0) await sleep(20);
    }
    expect(await move()).toEqual({ moved: 0, nextDueMs: undefined, dropped: 0 });

    const entries = await entriesOf(admin, stream);
    expect(entries).toHaveLength(1);
    const [id, fields] = entries[0]!;
    expect(idMillis(id)).toBeGreaterThanOrEqual(dueAt);
    // The entry is exactly what an immediate publish of the same event writes (HMAC is deterministic).
    const expected = await prepareEntry(publisher.config.routes.get('order.placed')!, scheduled);
    const asBytes = (v: unknown) => Buffer.from(typeof v === 'string' ? v : (v as Uint8Array));
    expect([...fields.keys()]).toEqual(['event', 'event_id', 'payload', 'traceparent', 'key_id', 'sig']);
    expect([...fields].flat().map((v) => asBytes(v).toString('hex'))).toEqual(expected.fields.map((v) => asBytes(v).toString('hex')));
    expect(await scheduleOf(admin, stream)).toEqual({ due: new Map(), stored: 0 });
  });

  it('moves events due across concurrent movers on several connections: each exactly once, none early', async () => {
    const publisher = publisherWith();
    const start = await redisNow(admin);
    const count = 120;
    const dues = new Map<string, number>();
    const events = Array.from({ length: count }, (_, i) => {
      // Due after the batch is in (a REST batch takes a while), then spread over half a second.
      dues.set(`c${i}`, start + 1_000 + (i % 12) * 40);
      return { ...event(`c${i}`), deliverAt: dues.get(`c${i}`)! };
    });
    await publisher.publishBatch(events);
    expect((await scheduleOf(admin, stream)).due.size).toBe(count);

    const movers = Array.from({ length: 5 }, () => kind.connect());
    const giveUpAt = Date.now() + 10_000;
    try {
      let total = 0;
      await Promise.all(
        movers.map(async (mover) => {
          while ((await admin.zcard(scheduleKeys(stream).due)) > 0 && Date.now() < giveUpAt) {
            const { moved } = await move(7, mover);
            total += moved;
          }
        }),
      );
      expect(total).toBe(count);
    } finally {
      await Promise.all(movers.map((m) => m.close()));
    }
    const entries = await entriesOf(admin, stream);
    const ids = entries.map(([, fields]) => fields.get('event_id')!.toString());
    expect(ids).toHaveLength(count);
    expect(new Set(ids).size).toBe(count);
    for (const [entryId, fields] of entries) expect(idMillis(entryId)).toBeGreaterThanOrEqual(dues.get(fields.get('event_id')!.toString())!);
    expect(await scheduleOf(admin, stream)).toEqual({ due: new Map(), stored: 0 });
    // Each moved entry is counted as a recording writer's append (claim.lua's native proof).
    expect(Number(await admin.hget(sizeKeys(stream).counts, 'plain'))).toBe(count);
  });

  it('lets a cancel and a move race for each event: exactly one wins, nothing is left half-done', async () => {
    const publisher = publisherWith();
    const dueAt = (await redisNow(admin)) + SOON_MS;
    const count = 60;
    await publisher.publishBatch(Array.from({ length: count }, (_, i) => ({ ...event(`r${i}`), deliverAt: dueAt })));
    const cancellers = [kind.connect(), kind.connect()];
    const movers = [kind.connect(), kind.connect()];
    const cancelled = new Set<string>();
    try {
      await untilRedisTime(admin, dueAt);
      // Movers take one event per call from the earliest (r0, r1, r10, …: equal due times go in
      // event_id order); cancellers work from the other end: they meet, and race, in between.
      await Promise.all([
        ...cancellers.map(async (canceller, c) => {
          for (let i = count - 1 - c; i >= 0; i -= cancellers.length) {
            const outcome = await cancelScheduled(canceller, stream, `r${i}`);
            if (outcome.status === 'cancelled') cancelled.add(`r${i}`);
          }
        }),
        ...movers.map(async (mover) => {
          const giveUpAt = Date.now() + 10_000;
          while ((await admin.zcard(scheduleKeys(stream).due)) > 0 && Date.now() < giveUpAt) await move(1, mover);
        }),
      ]);
    } finally {
      await Promise.all([...cancellers, ...movers].map((p) => p.close()));
    }
    const appended = (await entriesOf(admin, stream)).map(([, fields]) => fields.get('event_id')!.toString());
    expect(new Set(appended).size).toBe(appended.length);
    for (let i = 0; i < count; i += 1) {
      // Never both, never neither.
      expect([cancelled.has(`r${i}`), appended.includes(`r${i}`)], `r${i}`).toSatisfy(([c, a]: boolean[]) => c !== a);
    }
    expect(cancelled.size + appended.length).toBe(count);
    expect(await scheduleOf(admin, stream)).toEqual({ due: new Map(), stored: 0 });
  });

  it('cancels a scheduled event by event_id (never appended then), and reports one it cannot find', async () => {
    const publisher = publisherWith();
    const kept = await publisher.publish(event('keep'), { delayMs: 60_000 });
    const gone = await publisher.publish(event('gone'), { delayMs: 60_000 });
    expect(await cancelScheduled(port, stream, 'gone')).toEqual({ status: 'cancelled', eventId: 'gone', dueMs: gone.scheduled!.deliverAtMs });
    expect(await cancelScheduled(port, stream, 'gone')).toEqual({ status: 'not_scheduled', eventId: 'gone' });
    expect(await cancelScheduled(port, stream, 'never')).toEqual({ status: 'not_scheduled', eventId: 'never' });
    expect(await scheduleOf(admin, stream)).toEqual({ due: new Map([['keep', kept.scheduled!.deliverAtMs]]), stored: 1 });
    // The dedupe record keeps the event_id spent: a retried publish does not bring it back.
    expect(await admin.get(`${stream}:pub:gone`)).toMatch(new RegExp(`^cancelled@${gone.scheduled!.deliverAtMs} [0-9a-f]{40}$`));
    const retried = await publisher.publish(event('gone'), { delayMs: 60_000 });
    expect(retried).toMatchObject({ entryId: '', duplicate: true, scheduled: { deliverAtMs: gone.scheduled!.deliverAtMs, cancelled: true, dueInMs: undefined } });
    expect((await scheduleOf(admin, stream)).due.has('gone')).toBe(false);
    // Moved already: nothing to cancel, and the entry stays.
    await publisher.publish(event('now'), { deliverAt: 0 });
    expect(await cancelScheduled(port, stream, 'now')).toEqual({ status: 'not_scheduled', eventId: 'now' });
    expect(await admin.xlen(stream)).toBe(1);
  });

  describe('publish dedupe', () => {
    it('answers a repeat of a scheduled event_id — scheduled again, at another time, or at once — as a duplicate of the original', async () => {
      const publisher = publisherWith();
      const original = await publisher.publish(event('d1'), { delayMs: 60_000 });
      const due = original.scheduled!.deliverAtMs;
      const rescheduled = await publisher.publish(event('d1'), { delayMs: 5_000 });
      expect(rescheduled).toMatchObject({ entryId: '', duplicate: true, scheduled: { deliverAtMs: due, cancelled: false } });
      expect(rescheduled.scheduled!.dueInMs).toBeGreaterThan(50_000);
      // An immediate publish goes through publish.lua, which reads the same record.
      expect(await publisher.publish(event('d1'))).toMatchObject({ entryId: '', duplicate: true, scheduled: { deliverAtMs: due, cancelled: false } });
      const [inBatch] = await publisher.publishBatch([{ ...event('d1'), deliverAt: due + 1_000 }]);
      expect(inBatch).toMatchObject({ duplicate: true, scheduled: { deliverAtMs: due } });
      expect(await admin.exists(stream)).toBe(0);
      expect((await scheduleOf(admin, stream)).due).toEqual(new Map([['d1', due]]));
      // Until the due time, then a whole window (600 s) from it.
      const ttl = await admin.ttl(`${stream}:pub:d1`);
      expect(ttl).toBeGreaterThan(600 + 55);
      expect(ttl).toBeLessThanOrEqual(600 + 61);
    });

    it('refuses the same event_id with another body, scheduled or at once (PUBLISH_KEY_REUSED), writing nothing', async () => {
      const publisher = publisherWith();
      await publisher.publish(event('d1', 'first'), { delayMs: 60_000 });
      await expect(publisher.publish(event('d1', 'second'), { delayMs: 60_000 })).rejects.toMatchObject({ code: 'PUBLISH_KEY_REUSED' });
      await expect(publisher.publish(event('d1', 'second'))).rejects.toMatchObject({ code: 'PUBLISH_KEY_REUSED' });
      expect(await admin.exists(stream)).toBe(0);
      expect((await scheduleOf(admin, stream)).due.size).toBe(1);
    });

    it('answers a scheduled repeat of an appended event with the original entry id', async () => {
      const publisher = publisherWith();
      const original = await publisher.publish(event('d1'));
      expect(await publisher.publish(event('d1'), { delayMs: 60_000 })).toEqual({ ...original, duplicate: true });
      expect(await scheduleOf(admin, stream)).toEqual({ due: new Map(), stored: 0 });
    });

    it('still answers a duplicate after the move, while the window runs (no entry id: the record predates the move)', async () => {
      const publisher = publisherWith();
      const original = await publisher.publish(event('d1'), { deliverAt: (await redisNow(admin)) + SOON_MS });
      await untilRedisTime(admin, original.scheduled!.deliverAtMs);
      expect((await move()).moved).toBe(1);
      expect(await publisher.publish(event('d1'), { delayMs: 1_000 })).toMatchObject({ duplicate: true, entryId: '', scheduled: { deliverAtMs: original.scheduled!.deliverAtMs } });
      expect(await publisher.publish(event('d1'))).toMatchObject({ duplicate: true, scheduled: { deliverAtMs: original.scheduled!.deliverAtMs } });
      expect(await admin.xlen(stream)).toBe(1);
      expect(await scheduleOf(admin, stream)).toEqual({ due: new Map(), stored: 0 });
    });

    it('keeps one copy per event_id without the record: the window off, or the record gone while the event waits (scheduled again or published at once)', async () => {
      const windowless = publisherWith({ dedupeWindowSeconds: 0 });
      const original = await windowless.publish(event('w1'), { delayMs: 60_000 });
      expect(await windowless.publish(event('w1'), { delayMs: 1_000 })).toMatchObject({ duplicate: true, scheduled: { deliverAtMs: original.scheduled!.deliverAtMs } });
      await expect(windowless.publish(event('w1', 'other body'), { delayMs: 1_000 })).rejects.toMatchObject({ code: 'PUBLISH_KEY_REUSED' });
      expect(await admin.exists(`${stream}:pub:w1`)).toBe(0);

      const publisher = publisherWith();
      const kept = await publisher.publish(event('w2'), { delayMs: 60_000 });
      await admin.del(`${stream}:pub:w2`); // expired while a late move had not run yet
      expect(await publisher.publish(event('w2'), { delayMs: 1_000 })).toMatchObject({ duplicate: true, scheduled: { deliverAtMs: kept.scheduled!.deliverAtMs } });
      // An immediate publish too (publish.lua reads the schedule beside the record): no second copy.
      await admin.del(`${stream}:pub:w2`);
      expect(await publisher.publish(event('w2'))).toMatchObject({ duplicate: true, entryId: '', scheduled: { deliverAtMs: kept.scheduled!.deliverAtMs } });
      await expect(publisher.publish(event('w2', 'other body'))).rejects.toMatchObject({ code: 'PUBLISH_KEY_REUSED' });
      expect(await admin.exists(stream)).toBe(0);
      expect((await scheduleOf(admin, stream)).due.size).toBe(2);
    });
  });

  it('hands a consumer the moved entry, which verifies as the producer signed it', async () => {
    const payload = port.transport === 'rest' ? UTF8_PAYLOAD : BINARY_PAYLOAD;
    const seen: Array<{ payload: Uint8Array; producer: string; traceparent: string | undefined }> = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream),
      process: createSignedProcessor({
        stream,
        auth: { ...HMAC, producer: 'shop' },
        decode: rawPayload,
        handler: ({ payload: bytes, producer, traceparent }) => {
          seen.push({ payload: Uint8Array.from(bytes), producer, traceparent });
        },
      }),
    });
    await poller.ensureGroup();
    const result = await publisherWith().publish({ ...event('s1', payload), traceparent: TP }, { deliverAt: (await redisNow(admin)) + SOON_MS });
    expect(await poller.run({ mode: 'drain', deadline: Date.now() + 5_000 })).toMatchObject({ acked: 0 });
    await untilRedisTime(admin, result.scheduled!.deliverAtMs);
    expect((await move()).moved).toBe(1);
    expect(await poller.run({ mode: 'drain', deadline: Date.now() + 5_000 })).toMatchObject({ acked: 1, authRejected: 0, deadLettered: 0 });
    const bytes = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
    expect(seen).toEqual([{ payload: bytes, producer: 'shop', traceparent: TP }]);
  });

  it('records the moved entry sizes as every writer does (a large one in the large-entry set)', async () => {
    const publisher = publisherWith();
    const dueAt = (await redisNow(admin)) + SOON_MS;
    await publisher.publishBatch([
      { ...event('small'), deliverAt: dueAt },
      { ...event('large', 'x'.repeat(4_000)), deliverAt: dueAt },
    ]);
    await untilRedisTime(admin, dueAt);
    expect((await move()).moved).toBe(2);
    const sizes = sizeKeys(stream);
    expect(await admin.hgetall(sizes.counts)).toEqual({ plain: '2', large: '1' });
    const [[largeId, largeFields]] = (await entriesOf(admin, stream)).filter(([, f]) => f.get('event_id')!.toString() === 'large') as [[string, Map<string, Buffer>]];
    let bytes = largeId.length;
    for (const [name, value] of largeFields) bytes += name.length + value.length;
    const [ms, seq] = largeId.split('-') as [string, string];
    expect(await admin.zrange(sizes.large, 0, -1)).toEqual([`${ms.padStart(20, '0')}-${seq.padStart(20, '0')} ${bytes}`]);
  });

  it('appends at once an event whose due time has passed, as an immediate publish would', async () => {
    const result = await publisherWith().publish(event('p1'), { deliverAt: new Date((await redisNow(admin)) - 60_000) });
    expect(result).toEqual({ eventId: 'p1', eventType: 'order.placed', stream, entryId: expect.stringMatching(/^\d+-\d+$/), duplicate: false });
    expect(await admin.xlen(stream)).toBe(1);
    expect(await admin.get(`${stream}:pub:p1`)).toMatch(new RegExp(`^${result.entryId} [0-9a-f]{40}$`));
    expect(await admin.hget(sizeKeys(stream).counts, 'plain')).toBe('1');
    expect(await publisherWith().publish(event('p2'), { delayMs: 0 })).toMatchObject({ entryId: expect.stringMatching(/^\d+-\d+$/), duplicate: false });
    expect(await scheduleOf(admin, stream)).toEqual({ due: new Map(), stored: 0 });
  });

  it.each([
    ['a delay past maxDelayMs', { delayMs: 1_001 }, 'delayMs'],
    ['a negative delay', { delayMs: -1 }, 'delayMs'],
    ['a delay that is not a number', { delayMs: Number.NaN }, 'delayMs'],
    ['a due time past maxDelayMs', { deliverAt: Date.now() + 60_000 }, 'deliverAt'],
    ['an invalid Date', { deliverAt: new Date('not a date') }, 'deliverAt'],
    ['both options', { deliverAt: Date.now(), delayMs: 10 }, 'deliverAt'],
  ])('refuses %s, naming the option, with nothing sent', async (_, schedule, field) => {
    const metered = meterPort(port);
    const publisher = createPublisher({ port: metered, routes: { 'order.placed': stream }, auth: HMAC, maxDelayMs: 1_000 });
    await expect(publisher.publish(event('b1'), schedule)).rejects.toMatchObject({ code: 'PUBLISH_SCHEDULE_INVALID', field, transient: false });
    expect(metered.roundTrips).toBe(0);
    expect(publisher.duplicateHints).toBe(0);
  });

  it('refuses, on the Redis clock, a due time past the bound that the publisher clock let through', async () => {
    const schedule = scheduleKeys(stream);
    const sizes = sizeKeys(stream);
    const farAhead = (await redisNow(admin)) + 10_000;
    const reply = await admin.eval(schedulePublishScript.text, 6, stream, sizes.counts, sizes.large, schedule.due, schedule.entries, `${stream}:pub:x1`,
      600, 3, 'x1', 'at', farAhead, 1_000, 'event', 'order.placed', 'event_id', 'x1', 'payload', '{}');
    expect((reply as unknown[])[0]).toBe(4);
    expect(await admin.keys(`${stream}*`)).toEqual([]);
  });

  it('moves at most maxMoved per call, earliest due first, and says when more are due', async () => {
    const start = (await redisNow(admin)) + SOON_MS;
    await publisherWith().publishBatch([
      { ...event('m3'), deliverAt: start + 30 },
      { ...event('m1'), deliverAt: start + 10 },
      { ...event('m2'), deliverAt: start + 20 },
      { ...event('later'), deliverAt: start + 60_000 },
    ]);
    await untilRedisTime(admin, start + 30);
    const first = await move(2);
    expect(first).toEqual({ moved: 2, nextDueMs: start + 30, dropped: 0 });
    expect(first.nextDueMs!).toBeLessThanOrEqual(await redisNow(admin)); // more were due than allowed
    expect(await move(2)).toEqual({ moved: 1, nextDueMs: start + 60_000, dropped: 0 });
    expect(await move(0)).toEqual({ moved: 0, nextDueMs: start + 60_000, dropped: 0 });
    expect((await entriesOf(admin, stream)).map(([, f]) => f.get('event_id')!.toString())).toEqual(['m1', 'm2', 'm3']);
  });

  it('drops an index entry whose fields another hand deleted, and moves the events behind it', async () => {
    const start = (await redisNow(admin)) + SOON_MS;
    await publisherWith().publishBatch([
      { ...event('broken'), deliverAt: start + 10 },
      { ...event('fine'), deliverAt: start + 20 },
    ]);
    await admin.hdel(scheduleKeys(stream).entries, 'broken');
    await untilRedisTime(admin, start + 20);
    expect(await move()).toEqual({ moved: 1, nextDueMs: undefined, dropped: 1 });
    expect((await entriesOf(admin, stream)).map(([, f]) => f.get('event_id')!.toString())).toEqual(['fine']);
  });

  it('lists scheduled events earliest due first, by page, with their type and size', async () => {
    const start = await redisNow(admin);
    await publisherWith().publishBatch([
      { ...event('l2', 'xx'), deliverAt: start + 20_000 },
      { ...event('l1', 'x'), deliverAt: start + 10_000 },
      { ...event('l3', 'xxx'), deliverAt: start + 30_000 },
    ]);
    const first = await listScheduled(port, stream, { limit: 2 });
    expect(first.total).toBe(3);
    expect(first.events.map((e) => [e.eventId, e.dueMs, e.eventType])).toEqual([
      ['l1', start + 10_000, 'order.placed'],
      ['l2', start + 20_000, 'order.placed'],
    ]);
    // The entry's field names and values: event, event_id, payload, key_id, sig.
    const expectedBytes = 'event'.length + 'order.placed'.length + 'event_id'.length + 2 + 'payload'.length + 1 + 'key_id'.length + 2 + 'sig'.length + 64;
    expect(first.events[0]!.bytes).toBe(expectedBytes);
    expect(first.nextOffset).toBe(2);
    const second = await listScheduled(port, stream, { offset: first.nextOffset, limit: 2 });
    expect(second.events.map((e) => e.eventId)).toEqual(['l3']);
    expect(second.nextOffset).toBeUndefined();
    expect(await listScheduled(port, `${stream}-none`)).toEqual({ total: 0, events: [], nextOffset: undefined });
  });

  it('shows the scheduled count and the next due time in the backlog probe', async () => {
    await port.exchange([{ name: 'XGROUP', args: ['CREATE', stream, 'g', '0', 'MKSTREAM'] }]);
    expect(await probeBacklog(port, { stream, group: 'g' })).toMatchObject({ scheduled: 0, scheduledNextDueAt: undefined });
    const first = await publisherWith().publish(event('b1'), { delayMs: 30_000 });
    await publisherWith().publish(event('b2'), { delayMs: 90_000 });
    expect(await probeBacklog(port, { stream, group: 'g' })).toMatchObject({ scheduled: 2, scheduledNextDueAt: first.scheduled!.deliverAtMs });
  });
});
