/**
 * The outbox and its relay on both databases, publishing through the signed publisher to
 * the private Redis: committed rows go out signed and are marked sent once; a rolled-back
 * enqueue never goes out; one ordering key's rows go out in id order and a refused row
 * holds back its key (only); a relay that dies between publish and mark re-publishes under
 * the same ids and the consumer's inbox applies each effect once; retention deletes old
 * inbox rows, old sent rows and the key rows they emptied only; rows written before the
 * keys table existed keep publishing after `migrate`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createSignedProcessor } from '../../src/admission/signed-processor';
import { createPoller } from '../../src/consume/poller';
import { rawPayload } from '../../src/consume/processor';
import { createPublisher, type Publisher } from '../../src/publish/publisher';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { createInbox } from '../../src/postgres/inbox';
import { createOutbox, type OutboxEvent } from '../../src/postgres/outbox';
import { relayOutbox } from '../../src/postgres/relay';
import { pruneTables } from '../../src/postgres/retention';
import type { SqlDatabase } from '../../src/postgres/sql';
import { parseTables, type Tables } from '../../src/postgres/tables';
import { migrate } from '../../src/postgres/migrate';
import { MIGRATIONS } from '../../src/postgres/migrations';
import { fastConfig } from '../support/poller';
import { adminClient, pendingIds, uniquePrefix } from '../support/redis';
import { databaseKinds, freshTables, uniqueSchema } from './support/databases';

const KEY = 'outbox-relay-test-key-0123456789';
const text = new TextDecoder();

describe.each(databaseKinds)('outbox relay on $name', (kind) => {
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

  const publisher = (dedupeWindowSeconds = 600) =>
    createPublisher({ port, routes: { 'evt.made': stream }, auth: { mode: 'hmac', keyId: 'k1', key: KEY }, dedupeWindowSeconds });
  const event = (eventId: string, orderingKey?: string, extra: Partial<OutboxEvent> = {}): OutboxEvent => ({
    producer: 'maker',
    eventType: 'evt.made',
    eventId,
    payload: JSON.stringify({ eventId }),
    orderingKey,
    ...extra,
  });
  const enqueueAll = (events: OutboxEvent[]) =>
    db.transaction(async (tx) => {
      for (const e of events) await createOutbox(tables).enqueue(tx, e);
    });
  const streamIds = async () => (await admin.xrange(stream, '-', '+')).map(([, fields]) => fields[fields.indexOf('event_id') + 1]);
  const unsent = async () => (await db.query<{ event_id: string }>(`SELECT event_id FROM ${tables.outbox} WHERE sent_at IS NULL ORDER BY id`)).map((r) => r.event_id);

  it('publishes committed rows signed, in id order, marks them sent, and never twice', async () => {
    const outbox = createOutbox(tables);
    await db.transaction(async (tx) => {
      expect(await outbox.enqueue(tx, event('a1', 'A'))).toBe('enqueued');
      expect(await outbox.enqueue(tx, event('a1', 'A'))).toBe('duplicate');
      await outbox.enqueue(tx, event('b1', 'B', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }));
      await outbox.enqueue(tx, event('a2', 'A'));
    });
    await db
      .transaction(async (tx) => {
        await outbox.enqueue(tx, event('rolled-back'));
        throw new Error('the state change failed');
      })
      .catch(() => {});
    const pub = publisher();
    expect(await relayOutbox(db, tables, () => pub)).toMatchObject({ published: 3, duplicates: 0, refused: 0 });
    expect(await streamIds()).toEqual(['a1', 'b1', 'a2']);
    const [first] = await admin.xrange(stream, '-', '+');
    expect(first![1]).toEqual(expect.arrayContaining(['key_id', 'k1', 'sig']));
    expect(await unsent()).toEqual([]);
    expect(await relayOutbox(db, tables, () => pub)).toMatchObject({ published: 0 });
    expect(await streamIds()).toHaveLength(3);
  });

  it('publishes a row\'s ordering key as the entry\'s flow_key, and a key no flow key can hold without one, never refused', async () => {
    const long = 'k'.repeat(1025);
    await enqueueAll([event('f1', 'inst-1'), event('f2'), event('f3', long), event('f4', 'inst-1')]);
    expect(await relayOutbox(db, tables, () => publisher())).toMatchObject({ published: 4, refused: 0 });
    const flowKeys = (await admin.xrange(stream, '-', '+')).map(([, fields]) => (fields.includes('flow_key') ? fields[fields.indexOf('flow_key') + 1] : null));
    expect(flowKeys).toEqual(['inst-1', null, null, 'inst-1']);
    expect(await streamIds()).toEqual(['f1', 'f2', 'f3', 'f4']);
  });

  it('publishes in passes of `batch` until drained, within the deadline', async () => {
    await enqueueAll(Array.from({ length: 25 }, (_, i) => event(`n${i}`, `k${i % 3}`)));
    const report = await relayOutbox(db, tables, () => publisher(), { batch: 10, deadline: Date.now() + 10_000 });
    expect(report).toMatchObject({ passes: 3, published: 25 });
    expect(await streamIds()).toEqual(Array.from({ length: 25 }, (_, i) => `n${i}`));
  });

  it('refuses a row the publisher can never send and holds back only its key', async () => {
    await enqueueAll([event('x1', 'X', { eventType: 'evt.unknown' }), event('x2', 'X'), event('y1', 'Y'), event('z1', 'Z', { producer: 'nobody' })]);
    const pub = publisher();
    const report = await relayOutbox(db, tables, (producer) => (producer === 'maker' ? pub : undefined));
    expect(report).toMatchObject({ published: 1, refused: 2, heldBack: 1 });
    expect(await streamIds()).toEqual(['y1']);
    const refused = await db.query<{ event_id: string; refusal: string }>(`SELECT event_id, refusal FROM ${tables.outbox} WHERE refused_at IS NOT NULL ORDER BY id`);
    expect(refused).toEqual([
      { event_id: 'x1', refusal: 'PUBLISH_ROUTE_UNKNOWN' },
      { event_id: 'z1', refusal: 'PRODUCER_UNKNOWN' },
    ]);
    // x2 waits behind its refused predecessor until an operator clears it.
    expect(await relayOutbox(db, tables, () => pub)).toMatchObject({ published: 0 });
    await db.query(`UPDATE ${tables.outbox} SET refused_at = NULL, refusal = NULL, event_type = 'evt.made' WHERE event_id = 'x1'`);
    expect(await relayOutbox(db, tables, () => pub)).toMatchObject({ published: 2 });
    expect(await streamIds()).toEqual(['y1', 'x1', 'x2']);
  });

  it('a relay dying between publish and mark re-publishes the same ids; the consumer inbox applies each once', async () => {
    await db.query(`CREATE TABLE IF NOT EXISTS ${tables.schema}.effects (event_id text PRIMARY KEY, applied int NOT NULL)`);
    await enqueueAll(Array.from({ length: 12 }, (_, i) => event(`c${i}`, `k${i % 4}`)));
    // No dedupe window: the second publish appends again, so the inbox alone must absorb it.
    const plain = publisher(0);
    const dying: Publisher = {
      ...plain,
      async publishBatch(events) {
        await plain.publishBatch(events);
        throw new Error('process died before marking the rows sent');
      },
    };
    await expect(relayOutbox(db, tables, () => dying)).rejects.toThrow('process died');
    expect(await unsent()).toHaveLength(12);
    expect(await relayOutbox(db, tables, () => plain)).toMatchObject({ published: 12 });
    expect(await streamIds()).toHaveLength(24);

    const inbox = createInbox(tables);
    const outcomes: Array<string | undefined> = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream, { batch: 100 }),
      process: createSignedProcessor({
        stream,
        auth: { mode: 'hmac', keyId: 'k1', key: KEY, producer: 'maker' },
        decode: rawPayload,
        handler: async ({ eventId, payload }) => {
          const outcome = await inbox.handle(db, { consumer: 'downstream', eventId }, async (tx) => {
            await tx.query(
              `INSERT INTO ${tables.schema}.effects VALUES ($1, 1) ON CONFLICT (event_id) DO UPDATE SET applied = effects.applied + 1`,
              [JSON.parse(text.decode(payload)).eventId],
            );
          });
          outcomes.push(outcome);
          return outcome;
        },
      }),
    });
    await poller.ensureGroup();
    expect(await poller.run({ mode: 'drain', deadline: Date.now() + 10_000 })).toMatchObject({ acked: 24 });
    expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(12);
    const effects = await db.query<{ applied: number }>(`SELECT applied FROM ${tables.schema}.effects`);
    expect(effects).toHaveLength(12);
    expect(effects.every((e) => e.applied === 1)).toBe(true);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });

  it('retention deletes old inbox rows and old sent rows, never unsent or recent ones, and the key rows it emptied', async () => {
    const inbox = createInbox(tables);
    for (const eventId of ['old-1', 'old-2', 'new-1']) await inbox.handle(db, { consumer: 'c', eventId }, async () => {});
    await db.query(`UPDATE ${tables.inbox} SET recorded_at = now() - interval '40 days' WHERE event_id LIKE 'old-%'`);
    await enqueueAll([event('s-old', 'S'), event('s-new'), event('unsent-old'), event('u-old', 'U'), event('u-unsent', 'U')]);
    await db.query(`UPDATE ${tables.outbox} SET sent_at = now() - interval '10 days' WHERE event_id IN ('s-old', 'u-old')`);
    await db.query(`UPDATE ${tables.outbox} SET sent_at = now() WHERE event_id = 's-new'`);
    await db.query(`UPDATE ${tables.outbox} SET enqueued_at = now() - interval '40 days' WHERE event_id = 'unsent-old'`);
    const report = await pruneTables(db, tables, { inboxRetentionSeconds: 30 * 86_400, sentRetentionSeconds: 7 * 86_400, batch: 1 });
    expect(report).toEqual({ inboxDeleted: 2, outboxDeleted: 2, outboxKeysDeleted: 1 });
    expect((await db.query<{ event_id: string }>(`SELECT event_id FROM ${tables.inbox}`)).map((r) => r.event_id)).toEqual(['new-1']);
    expect((await db.query<{ event_id: string }>(`SELECT event_id FROM ${tables.outbox} ORDER BY id`)).map((r) => r.event_id)).toEqual(['s-new', 'unsent-old', 'u-unsent']);
    // U still has an unsent row: its key row stays (deleting it would be safe, only wasted).
    expect((await db.query<{ ordering_key: string }>(`SELECT ordering_key FROM ${tables.outboxKeys}`)).map((r) => r.ordering_key)).toEqual(['U']);
    // A deleted key row comes back with the key's next enqueue, which publishes after the rest.
    await enqueueAll([event('s-next', 'S')]);
    expect(await relayOutbox(db, tables, () => publisher())).toMatchObject({ published: 3 });
    expect(await streamIds()).toEqual(['unsent-old', 'u-unsent', 's-next']);
  });

  it('an outbox from before the keys table keeps publishing its rows after migrate, in order with new ones', async () => {
    const older = parseTables({ schema: uniqueSchema() });
    try {
      await migrate(db, older, MIGRATIONS.slice(0, 1));
      // Rows as the enqueue before migration 0002 wrote them: no key row, ids from the INSERT.
      for (const [eventId, orderingKey] of [['old-1', 'K'], ['old-2', 'K'], ['old-3', null]]) {
        await db.query(
          `INSERT INTO ${older.outbox} (producer, event_type, event_id, payload, ordering_key) VALUES ('maker', 'evt.made', $1, $2, $3)`,
          [eventId, new TextEncoder().encode(eventId!), orderingKey],
        );
      }
      expect(await migrate(db, older)).toMatchObject({ applied: ['0002_outbox_keys', '0003_outbox_schedule'] });
      await db.transaction(async (tx) => void (await createOutbox(older).enqueue(tx, event('new-1', 'K'))));
      expect(await relayOutbox(db, older, () => publisher())).toMatchObject({ published: 4, heldBack: 0 });
      expect(await streamIds()).toEqual(['old-1', 'old-2', 'old-3', 'new-1']);
    } finally {
      await db.query(`DROP SCHEMA ${older.schema} CASCADE`);
    }
  });
});
