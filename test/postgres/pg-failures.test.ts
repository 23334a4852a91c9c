/**
 * What only a server with several connections can show (node-postgres on the PostgreSQL
 * service): a COMMIT whose reply is lost is DB_COMMIT_UNCERTAIN — retained — and the
 * redelivery finds the inbox row because the commit landed; a connection killed before
 * COMMIT (pg_terminate_backend) commits nothing and the redelivery applies the work; a
 * deadlock is DB_CONFLICT; concurrent relays never publish a row twice and keep each
 * key's order, and a row locked by another relay holds back its key's later rows.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createPublisher } from '../../src/publish/publisher';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { createInbox } from '../../src/postgres/inbox';
import { createOutbox } from '../../src/postgres/outbox';
import { connectPg } from '../../src/postgres/pg';
import { relayOutbox } from '../../src/postgres/relay';
import type { SqlDatabase } from '../../src/postgres/sql';
import type { Tables } from '../../src/postgres/tables';
import { verdictOfThrown } from '../../src/verdict/verdict';
import { adminClient, uniquePrefix } from '../support/redis';
import { startCommitCutProxy, type CommitCutProxy } from './support/commit-cut-proxy';
import { freshTables, pgUrl } from './support/databases';

describe('pg: uncertain commits, killed connections, conflicts, concurrent relays', () => {
  let db: SqlDatabase;
  let tables: Tables;
  let drop: () => Promise<void>;
  let proxy: CommitCutProxy;
  let port: RedisPort;
  let admin: Redis;
  const counter = () => `${tables.schema}.counter`;
  beforeAll(async () => {
    db = connectPg({ connectionString: pgUrl() });
    ({ tables, drop } = await freshTables(db));
    await db.query(`CREATE TABLE ${counter()} (id int PRIMARY KEY, n int NOT NULL)`);
    await db.query(`INSERT INTO ${counter()} VALUES (1, 0), (2, 0)`);
    const target = new URL(pgUrl());
    proxy = await startCommitCutProxy(target.hostname, Number(target.port || 5432));
    port = connectIoredis(inject('redisUrl'));
    admin = adminClient();
  });
  afterAll(async () => {
    await drop?.();
    await db?.close();
    await proxy?.close();
    await port?.close();
    admin?.disconnect();
  });
  beforeEach(async () => {
    await db.query(`TRUNCATE ${tables.outbox}`);
  });

  const count = async () => (await db.query<{ n: number }>(`SELECT n FROM ${counter()} WHERE id = 1`))[0]!.n;
  const bump = (tx: SqlDatabase) => tx.query(`UPDATE ${counter()} SET n = n + 1 WHERE id = 1`);

  it('a COMMIT whose reply is lost is uncertain (retain); the redelivery finds the row the commit wrote', async () => {
    const target = new URL(pgUrl());
    const through = connectPg({ connectionString: proxy.url(decodeURIComponent(target.username), target.pathname.slice(1)) });
    const inbox = createInbox(tables);
    const before = await count();
    try {
      const cut = proxy.cutAtNextCommit();
      const first = inbox.handle(through, { consumer: 'c', eventId: 'uncertain-1' }, async (tx) => void (await bump(tx as SqlDatabase)));
      const error = await first.then(() => undefined, (e: unknown) => e);
      await cut;
      expect(error).toMatchObject({ name: 'PostgresError', code: 'DB_COMMIT_UNCERTAIN' });
      expect(verdictOfThrown(error)).toEqual({ kind: 'retain', cause: 'handler_error' });
      // The commit landed: the redelivery is a duplicate and the effect happened once.
      let reran = false;
      expect(await inbox.handle(db, { consumer: 'c', eventId: 'uncertain-1' }, async () => void (reran = true))).toBe('duplicate');
      expect(reran).toBe(false);
      expect(await count()).toBe(before + 1);
    } finally {
      await through.close();
    }
  });

  it('a connection killed before COMMIT commits nothing (retain); the redelivery applies the work once', async () => {
    const inbox = createInbox(tables);
    const before = await count();
    const killed = inbox.handle(db, { consumer: 'c', eventId: 'killed-1' }, async (tx) => {
      await bump(tx as SqlDatabase);
      const [{ pid }] = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')) as [{ pid: number }];
      await db.query('SELECT pg_terminate_backend($1)', [pid]);
      await tx.query('SELECT 1');
    });
    await expect(killed).rejects.toMatchObject({ code: 'DB_UNAVAILABLE' });
    expect(await count()).toBe(before);
    expect(await inbox.handle(db, { consumer: 'c', eventId: 'killed-1' }, async (tx) => void (await bump(tx as SqlDatabase)))).toBeUndefined();
    expect(await count()).toBe(before + 1);
  });

  it('a deadlock is DB_CONFLICT (40P01): rolled back and retained', async () => {
    const inbox = createInbox(tables);
    let release!: () => void;
    const bothLocked = new Promise<void>((resolve) => (release = resolve));
    let locked = 0;
    const crossing = (first: number, second: number, eventId: string) =>
      inbox.handle(db, { consumer: 'c', eventId }, async (tx) => {
        await tx.query(`UPDATE ${counter()} SET n = n + 1 WHERE id = $1`, [first]);
        if (++locked === 2) release();
        await bothLocked;
        await tx.query(`UPDATE ${counter()} SET n = n + 1 WHERE id = $1`, [second]);
      });
    const outcomes = await Promise.allSettled([crossing(1, 2, 'dl-a'), crossing(2, 1, 'dl-b')]);
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.reason).toMatchObject({ code: 'DB_CONFLICT', sqlState: '40P01' });
  });

  it('concurrent relays publish every row exactly once, each key in order', async () => {
    const stream = `${uniquePrefix()}:relay`;
    const outbox = createOutbox(tables);
    const keys = 8;
    const total = 240;
    await db.transaction(async (tx) => {
      for (let i = 0; i < total; i += 1) {
        await outbox.enqueue(tx, { producer: 'p', eventType: 'e', eventId: `r${i}`, payload: `${i}`, orderingKey: `k${i % keys}` });
      }
    });
    // No dedupe window: a row published twice would show up as a second entry.
    const publisher = createPublisher({ port, routes: { e: stream }, auth: { mode: 'exclusive-stream', producer: 'p' }, dedupeWindowSeconds: 0 });
    const relays = Array.from({ length: 4 }, () => connectPg({ connectionString: pgUrl(), max: 1 }));
    try {
      const deadline = Date.now() + 15_000;
      while ((await db.query(`SELECT 1 FROM ${tables.outbox} WHERE sent_at IS NULL LIMIT 1`)).length > 0 && Date.now() < deadline) {
        await Promise.all(relays.map((relay) => relayOutbox(relay, tables, () => publisher, { batch: 7, deadline })));
      }
    } finally {
      await Promise.all(relays.map((relay) => relay.close()));
    }
    const published = (await admin.xrange(stream, '-', '+')).map(([, fields]) => Number(fields[fields.indexOf('payload') + 1]));
    expect(published.length).toBe(total);
    expect(new Set(published).size).toBe(total);
    for (let k = 0; k < keys; k += 1) {
      const ofKey = published.filter((i) => i % keys === k);
      expect(ofKey).toEqual([...ofKey].sort((a, b) => a - b));
    }
  });

  it('a row locked by another relay holds back its key; other keys go out', async () => {
    const stream = `${uniquePrefix()}:held`;
    const outbox = createOutbox(tables);
    await db.transaction(async (tx) => {
      for (const [eventId, orderingKey] of [['a1', 'A'], ['b1', 'B'], ['a2', 'A']]) {
        await outbox.enqueue(tx, { producer: 'p', eventType: 'e', eventId: eventId!, payload: eventId!, orderingKey });
      }
    });
    const publisher = createPublisher({ port, routes: { e: stream }, auth: { mode: 'exclusive-stream', producer: 'p' } });
    const other = connectPg({ connectionString: pgUrl(), max: 1 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const held = new Promise<void>((resolve) => (holding = resolve));
    const holder = other.transaction(async (tx) => {
      await tx.query(`SELECT id FROM ${tables.outbox} WHERE event_id = 'a1' FOR UPDATE`);
      holding();
      await released;
    });
    try {
      await held;
      expect(await relayOutbox(db, tables, () => publisher)).toMatchObject({ published: 1, heldBack: 1 });
      expect((await admin.xrange(stream, '-', '+')).map(([, f]) => f[f.indexOf('event_id') + 1])).toEqual(['b1']);
    } finally {
      release();
      await holder;
      await other.close();
    }
    expect(await relayOutbox(db, tables, () => publisher)).toMatchObject({ published: 2 });
    expect((await admin.xrange(stream, '-', '+')).map(([, f]) => f[f.indexOf('event_id') + 1])).toEqual(['b1', 'a1', 'a2']);
  });
});
