/**
 * Outbox rows due later and cancel rows (migration 0003, SPEC §5.6 over §6.1), on both
 * databases, relayed to the private Redis: a row with `deliverAt` is signed now and kept in
 * the stream's schedule until that instant, in its place in its key's order — which then
 * means the hand-over, not the arrival: the key's later rows go out at once. `delayMs`
 * counts from the enqueueing process's clock. A cancel row cancels the scheduled event after the row
 * that scheduled it (one pass or two), misses an event already moved, and replays harmlessly
 * after a crash. Cancels without a Redis port fail loudly; a due time or a cancel no retry can
 * fix is refused and blocks its key only. An outbox from before 0003 keeps publishing.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createSignedProcessor } from '../../src/admission/signed-processor';
import { createPoller } from '../../src/consume/poller';
import { rawPayload } from '../../src/consume/processor';
import { createPublisher } from '../../src/publish/publisher';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { createOutbox, type OutboxEvent } from '../../src/postgres/outbox';
import { relayOutbox, type RelayReport } from '../../src/postgres/relay';
import type { SqlDatabase } from '../../src/postgres/sql';
import { parseTables, type Tables } from '../../src/postgres/tables';
import { migrate } from '../../src/postgres/migrate';
import { MIGRATIONS } from '../../src/postgres/migrations';
import { listScheduled } from '../../src/schedule/list';
import { moveDueEvents } from '../../src/schedule/move';
import { fastConfig, sleepMs } from '../support/poller';
import { adminClient, uniquePrefix } from '../support/redis';
import { databaseKinds, freshTables, uniqueSchema } from './support/databases';

const KEY = 'outbox-schedule-test-key-0123456789';
const HOUR = 3_600_000;

describe.each(databaseKinds)('outbox rows due later, and cancels, on $name', (kind) => {
  let db: SqlDatabase;
  let tables: Tables;
  let drop: () => Promise<void>;
  let port: RedisPort;
  let admin: Redis;
  let stream: string;
  beforeAll(async () => {
    db = await kind.open();
    ({ tables, drop } = await freshTables(db));
    port = connectIoredis(inject('redisUrl'));
    admin = adminClient();
  }, 120_000);
  afterAll(async () => {
    await drop?.();
    await db?.close();
    await port?.close();
    admin?.disconnect();
  });
  beforeEach(async () => {
    stream = `${uniquePrefix()}:out`;
    await db.query(`TRUNCATE ${tables.outbox}, ${tables.inbox}, ${tables.outboxKeys}`);
  });

  const publisher = (options: { dedupeWindowSeconds?: number; maxDelayMs?: number } = {}) =>
    createPublisher({ port, routes: { 'evt.made': stream }, auth: { mode: 'hmac', keyId: 'k1', key: KEY }, ...options });
  const event = (eventId: string, orderingKey?: string, extra: Partial<OutboxEvent> = {}): OutboxEvent => ({
    producer: 'maker',
    eventType: 'evt.made',
    eventId,
    payload: JSON.stringify({ eventId }),
    orderingKey,
    ...extra,
  });
  const cancel = (eventId: string, orderingKey?: string) => ({ producer: 'maker', eventType: 'evt.made', eventId, orderingKey });
  const inTransaction = (work: (outbox: ReturnType<typeof createOutbox>, tx: Parameters<Parameters<SqlDatabase['transaction']>[0]>[0]) => Promise<unknown>) =>
    db.transaction(async (tx) => void (await work(createOutbox(tables), tx)));
  const streamIds = async () => (await admin.xrange(stream, '-', '+')).map(([, fields]) => fields[fields.indexOf('event_id') + 1]);
  const scheduled = async () => (await listScheduled(port, stream)).events.map((e) => ({ eventId: e.eventId, dueMs: e.dueMs }));
  const unsent = async () => (await db.query<{ event_id: string }>(`SELECT event_id FROM ${tables.outbox} WHERE sent_at IS NULL ORDER BY id`)).map((r) => r.event_id);
  const relay = (options: Parameters<typeof relayOutbox>[3] = {}, pub = publisher()) => relayOutbox(db, tables, () => pub, { port, ...options });

  it('a row due later is signed now and moved into the stream at its instant; its key\'s later rows go out without waiting', async () => {
    const dueAt = Date.now() + 1_500;
    await inTransaction(async (outbox, tx) => {
      await outbox.enqueue(tx, event('a1', 'A'));
      expect(await outbox.enqueue(tx, event('a2', 'A', { deliverAt: new Date(dueAt) }))).toBe('enqueued');
      await outbox.enqueue(tx, event('a3', 'A'));
      // Already due when relayed: appended at once, like an immediate row.
      await outbox.enqueue(tx, event('b1', 'B', { deliverAt: Date.now() - 60_000 }));
    });
    expect(await relay()).toMatchObject({ published: 4, scheduledPublished: 2, heldBack: 0, refused: 0 });
    expect(await unsent()).toEqual([]);
    expect(await streamIds()).toEqual(['a1', 'a3', 'b1']);
    expect(await scheduled()).toEqual([{ eventId: 'a2', dueMs: dueAt }]);
    let moved = 0;
    for (let i = 0; i < 100 && moved === 0; i += 1) {
      moved = (await moveDueEvents(port, stream)).moved;
      if (moved === 0) await sleepMs(100);
    }
    expect(await streamIds()).toEqual(['a1', 'a3', 'b1', 'a2']);
    // Signed at relay time, it verifies when it arrives.
    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream),
      process: createSignedProcessor({ stream, auth: { mode: 'hmac', keyId: 'k1', key: KEY, producer: 'maker' }, decode: rawPayload, handler: ({ eventId }) => void seen.push(eventId) }),
    });
    await poller.ensureGroup();
    expect(await poller.run({ mode: 'drain', deadline: Date.now() + 10_000 })).toMatchObject({ acked: 4, deadLettered: 0 });
    expect(seen).toEqual(['a1', 'a3', 'b1', 'a2']);
  });

  it('delayMs counts from the enqueueing process\'s clock, as a stepTimeout does', async () => {
    const before = Date.now();
    await inTransaction((outbox, tx) => outbox.enqueue(tx, event('d1', 'D', { delayMs: HOUR })));
    const after = Date.now();
    expect(await relay()).toMatchObject({ published: 1, scheduledPublished: 1 });
    const [row] = await scheduled();
    expect(row!.eventId).toBe('d1');
    expect(row!.dueMs).toBeGreaterThanOrEqual(before + HOUR);
    expect(row!.dueMs).toBeLessThanOrEqual(after + HOUR);
  });

  it('a rolled-back enqueue schedules nothing; a committed cancel, after its row, cancels it — in one pass or across two', async () => {
    await db
      .transaction(async (tx) => {
        await createOutbox(tables).enqueue(tx, event('rolled-back', 'K', { deliverAt: Date.now() + HOUR }));
        throw new Error('the step failed');
      })
      .catch(() => {});
    await inTransaction((outbox, tx) => outbox.enqueue(tx, event('t1', 'K', { deliverAt: Date.now() + HOUR })));
    await inTransaction(async (outbox, tx) => {
      expect(await outbox.enqueueCancel(tx, cancel('t1', 'K'))).toBe('enqueued');
      expect(await outbox.enqueueCancel(tx, cancel('t1', 'K'))).toBe('duplicate');
    });
    expect(await relay()).toMatchObject({ published: 1, scheduledPublished: 1, cancelsApplied: 1, cancelsMissed: 0, heldBack: 0 });
    expect(await scheduled()).toEqual([]);
    expect(await admin.get(`${stream}:pub:t1`)).toMatch(/^cancelled@\d+ /);
    expect(await unsent()).toEqual([]);

    await inTransaction((outbox, tx) => outbox.enqueue(tx, event('t2', 'K', { deliverAt: Date.now() + HOUR })));
    await inTransaction((outbox, tx) => outbox.enqueueCancel(tx, cancel('t2', 'K')));
    // One row per pass: the scheduling row in the first, its cancel in the second (a third finds nothing).
    const twoPasses = await relay({ batch: 1, deadline: Date.now() + 10_000 });
    expect(twoPasses).toMatchObject({ passes: 3, published: 1, cancelsApplied: 1 });
    expect(await scheduled()).toEqual([]);
    expect(await streamIds()).toEqual([]);
  });

  it('a cancel that comes after its event was moved into the stream is a miss: the event stays delivered', async () => {
    await inTransaction((outbox, tx) => outbox.enqueue(tx, event('fired', 'K', { deliverAt: Date.now() - 1 })));
    await inTransaction((outbox, tx) => outbox.enqueueCancel(tx, cancel('fired', 'K')));
    expect(await relay()).toMatchObject({ published: 1, cancelsApplied: 0, cancelsMissed: 1 });
    expect(await streamIds()).toEqual(['fired']);
    expect(await unsent()).toEqual([]);
  });

  it.each([600, 0])('a relay dying after scheduling and cancelling replays both; the event is not left scheduled (dedupe window %i s)', async (dedupeWindowSeconds) => {
    await inTransaction(async (outbox, tx) => {
      await outbox.enqueue(tx, event('t', 'K', { deliverAt: Date.now() + HOUR }));
      await outbox.enqueueCancel(tx, cancel('t', 'K'));
    });
    const markSent = `UPDATE ${tables.outbox} SET sent_at`;
    const dying: SqlDatabase = {
      ...db,
      transaction: (work, options) =>
        db.transaction(
          (tx) => work({ query: (text, params) => (text.startsWith(markSent) ? Promise.reject(new Error('died before marking the rows sent')) : tx.query(text, params)) }),
          options,
        ),
    };
    const pub = publisher({ dedupeWindowSeconds });
    await expect(relayOutbox(dying, tables, () => pub, { port })).rejects.toThrow('died before marking');
    expect(await unsent()).toEqual(['t', 'cancel t']);
    expect(await scheduled()).toEqual([]);
    const replay: RelayReport = await relay({}, pub);
    // With the window, the record says "cancelled": a duplicate, not scheduled again. Without
    // it, scheduled again — and cancelled again by the replayed cancel, which follows it.
    expect(replay).toMatchObject(dedupeWindowSeconds > 0 ? { published: 1, duplicates: 1, cancelsMissed: 1 } : { published: 1, duplicates: 0, cancelsApplied: 1 });
    expect(await scheduled()).toEqual([]);
    expect(await streamIds()).toEqual([]);
  });

  it('a pass that meets a cancel without the Redis port fails, naming it, after marking the rows before it', async () => {
    await inTransaction(async (outbox, tx) => {
      await outbox.enqueue(tx, event('t', 'K', { deliverAt: Date.now() + HOUR }));
      await outbox.enqueueCancel(tx, cancel('t', 'K'));
    });
    const pub = publisher();
    await expect(relayOutbox(db, tables, () => pub)).rejects.toMatchObject({ code: 'CONFIG_INVALID', problems: [expect.objectContaining({ path: 'port' })] });
    expect(await unsent()).toEqual(['cancel t']);
    expect(await relay({}, pub)).toMatchObject({ cancelsApplied: 1 });
  });

  it('a due time the publisher refuses, or a cancel with no route, is refused and holds back its key only', async () => {
    await inTransaction(async (outbox, tx) => {
      await outbox.enqueue(tx, event('too-far', 'X', { deliverAt: Date.now() + 2 * HOUR }));
      await outbox.enqueue(tx, event('x2', 'X'));
      await outbox.enqueueCancel(tx, { ...cancel('whatever', 'Y'), eventType: 'evt.unknown' });
      await outbox.enqueue(tx, event('y2', 'Y'));
      await outbox.enqueue(tx, event('z1', 'Z'));
    });
    const report = await relay({}, publisher({ maxDelayMs: HOUR }));
    expect(report).toMatchObject({ published: 1, refused: 2, heldBack: 2 });
    expect(await streamIds()).toEqual(['z1']);
    const refused = await db.query<{ event_id: string; refusal: string }>(`SELECT event_id, refusal FROM ${tables.outbox} WHERE refused_at IS NOT NULL ORDER BY id`);
    expect(refused).toEqual([
      { event_id: 'too-far', refusal: 'PUBLISH_SCHEDULE_INVALID' },
      { event_id: 'cancel whatever', refusal: 'PUBLISH_ROUTE_UNKNOWN' },
    ]);
  });

  it('an outbox from before 0003 keeps publishing its rows after migrate, and schedules new ones', async () => {
    const older = parseTables({ schema: uniqueSchema() });
    try {
      await migrate(db, older, MIGRATIONS.slice(0, 2));
      await db.transaction(async (tx) => {
        // As the enqueue before 0003 wrote a row: no deliver_at, no cancels column.
        await tx.query(`INSERT INTO ${older.outboxKeys} (ordering_key) VALUES ('K')`);
        await tx.query(`INSERT INTO ${older.outbox} (producer, event_type, event_id, payload, ordering_key) VALUES ('maker', 'evt.made', 'old-1', $1, 'K')`, [
          new TextEncoder().encode('old-1'),
        ]);
      });
      expect(await migrate(db, older)).toMatchObject({ applied: ['0003_outbox_schedule'] });
      await db.transaction(async (tx) => void (await createOutbox(older).enqueue(tx, event('new-1', 'K', { deliverAt: Date.now() + HOUR }))));
      expect(await relayOutbox(db, older, () => publisher(), { port })).toMatchObject({ published: 2, scheduledPublished: 1 });
      expect(await streamIds()).toEqual(['old-1']);
      expect((await scheduled()).map((e) => e.eventId)).toEqual(['new-1']);
    } finally {
      await db.query(`DROP SCHEMA ${older.schema} CASCADE`);
    }
  });
});
