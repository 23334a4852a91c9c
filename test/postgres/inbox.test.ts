/**
 * The inbox and the migrations on both databases (pg on the PostgreSQL service, PGlite):
 * first delivery commits work and inbox row together, a redelivery is 'duplicate' without
 * running the work, a Rejection or a caught-and-ignored statement failure commits nothing,
 * and `migrate` is idempotent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/postgres/inbox';
import { migrate } from '../../src/postgres/migrate';
import { MIGRATIONS } from '../../src/postgres/migrations';
import type { SqlDatabase } from '../../src/postgres/sql';
import { parseTables, type Tables } from '../../src/postgres/tables';
import { Rejection } from '../../src/verdict/verdict';
import { databaseKinds, uniqueSchema } from './support/databases';

describe('table names', () => {
  it('rejects names that are not plain SQL identifiers, naming the field', () => {
    expect(() => parseTables({ schema: 'app; drop table x', outbox: 'Out"box' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', problems: [expect.objectContaining({ path: 'schema' }), expect.objectContaining({ path: 'outbox' })] }),
    );
  });

  it("names the outbox's keys table after it, and refuses an outbox name whose keys table is another table", () => {
    expect(parseTables({ schema: 'app', outbox: 'events' }).outboxKeys).toBe('"app"."events_keys"');
    expect(() => parseTables({ outbox: 'events', inbox: 'events_keys' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', problems: [expect.objectContaining({ path: 'outbox', message: expect.stringContaining('"events_keys"') })] }),
    );
    // Derived names are cut at 63 bytes, like Postgres would: a 63-character outbox would be its own keys table.
    const longest = 'o'.repeat(63);
    expect(() => parseTables({ outbox: longest })).toThrow(expect.objectContaining({ problems: [expect.objectContaining({ path: 'outbox' })] }));
  });
});

describe.each(databaseKinds)('inbox on $name', (kind) => {
  let db: SqlDatabase;
  let tables: Tables;
  beforeAll(async () => {
    db = await kind.open();
    tables = parseTables({ schema: uniqueSchema(), inbox: 'my_inbox' });
    await migrate(db, tables);
    await db.query(`CREATE TABLE ${tables.schema}.counter (id int PRIMARY KEY, n int NOT NULL)`);
    await db.query(`INSERT INTO ${tables.schema}.counter VALUES (1, 0)`);
  }, 120_000);
  afterAll(async () => {
    await db?.query(`DROP SCHEMA ${tables.schema} CASCADE`);
    await db?.close();
  });

  const count = async () => (await db.query<{ n: number }>(`SELECT n FROM ${tables.schema}.counter WHERE id = 1`))[0]!.n;
  const bump = (tx: { query: SqlDatabase['query'] }) => tx.query(`UPDATE ${tables.schema}.counter SET n = n + 1 WHERE id = 1`);
  const inboxRows = async (eventId: string) =>
    (await db.query(`SELECT 1 FROM ${tables.inbox} WHERE consumer = 'c' AND event_id = $1`, [eventId])).length;

  it('migrate is idempotent and records what it applied', async () => {
    const all = ['0001_inbox_outbox', '0002_outbox_keys', '0003_outbox_schedule'];
    expect(await migrate(db, tables)).toEqual({ applied: [], alreadyApplied: all });
    const fresh = parseTables({ schema: uniqueSchema() });
    expect(await migrate(db, fresh)).toEqual({ applied: all, alreadyApplied: [] });
    await db.query(`DROP SCHEMA ${fresh.schema} CASCADE`);
  });

  it('migrate upgrades a database from before the outbox keys table with only what it lacks', async () => {
    const older = parseTables({ schema: uniqueSchema() });
    try {
      expect(await migrate(db, older, MIGRATIONS.slice(0, 1))).toEqual({ applied: ['0001_inbox_outbox'], alreadyApplied: [] });
      expect(await migrate(db, older)).toEqual({ applied: ['0002_outbox_keys', '0003_outbox_schedule'], alreadyApplied: ['0001_inbox_outbox'] });
      expect(await db.query(`SELECT ordering_key FROM ${older.outboxKeys}`)).toEqual([]);
    } finally {
      await db.query(`DROP SCHEMA ${older.schema} CASCADE`);
    }
  });

  it('commits the work with the inbox row once; the redelivery is a duplicate and does not run it', async () => {
    const inbox = createInbox(tables);
    const before = await count();
    let runs = 0;
    const handle = () => inbox.handle(db, { consumer: 'c', eventId: 'e-once' }, async (tx) => void (runs += 1, await bump(tx)));
    expect(await handle()).toBeUndefined();
    expect(await handle()).toBe('duplicate');
    expect(runs).toBe(1);
    expect(await count()).toBe(before + 1);
    expect(await inboxRows('e-once')).toBe(1);
  });

  it('rolls back a Rejection (work and inbox row) and rethrows it, so a redrive can run it again', async () => {
    const inbox = createInbox(tables);
    const before = await count();
    const rejected = inbox.handle(db, { consumer: 'c', eventId: 'e-rejected' }, async (tx) => {
      await bump(tx);
      throw new Rejection('bad_order');
    });
    await expect(rejected).rejects.toMatchObject({ code: 'REJECTION', reason: 'bad_order' });
    expect(await count()).toBe(before);
    expect(await inboxRows('e-rejected')).toBe(0);
  });

  it('commits nothing when the work swallowed a failed statement (COMMIT would roll back)', async () => {
    const inbox = createInbox(tables);
    const before = await count();
    const swallowed = inbox.handle(db, { consumer: 'c', eventId: 'e-swallowed' }, async (tx) => {
      await bump(tx);
      await tx.query('SELECT * FROM no_such_table').catch(() => {});
    });
    await expect(swallowed).rejects.toMatchObject({ name: 'PostgresError', code: 'DB_QUERY_FAILED' });
    expect(await count()).toBe(before);
    expect(await inboxRows('e-swallowed')).toBe(0);
    // A failure undone by ROLLBACK TO SAVEPOINT is not an abort: that transaction commits.
    await inbox.handle(db, { consumer: 'c', eventId: 'e-savepoint' }, async (tx) => {
      await tx.query('SAVEPOINT s');
      await tx.query('SELECT * FROM no_such_table').catch(() => {});
      await tx.query('ROLLBACK TO SAVEPOINT s');
      await bump(tx);
    });
    expect(await count()).toBe(before + 1);
  });

  it('maps a statement error to a typed PostgresError with its SQLSTATE (retained, not dead-lettered)', async () => {
    const inbox = createInbox(tables);
    const failing = inbox.handle(db, { consumer: 'c', eventId: 'e-fails' }, async (tx) => void (await tx.query('SELECT 1/0')));
    await expect(failing).rejects.toMatchObject({ code: 'DB_QUERY_FAILED', sqlState: '22012' });
    expect(await inboxRows('e-fails')).toBe(0);
  });
});
