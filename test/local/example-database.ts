/**
 * A database holding the example deployment's tables (saga.config.ts: the library's tables
 * in `public`, the example's in `order_saga`), isolated per test run: on the PostgreSQL
 * service a database of its own (the example's schema names are fixed), on PGlite a fresh
 * folder. `reopen()` opens a second, independent connection to the same data.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import config, { migrations } from '../../saga.config';
import { migrate } from '../../src/postgres/migrate';
import { MIGRATIONS } from '../../src/postgres/migrations';
import { connectPg } from '../../src/postgres/pg';
import { openPglite } from '../../src/postgres/pglite';
import type { SqlDatabase } from '../../src/postgres/sql';
import { parseTables } from '../../src/postgres/tables';
import { openPgliteCopy, pgUrl, type DatabaseKind } from '../postgres/support/databases';

export interface ExampleDatabase {
  readonly db: SqlDatabase;
  /** Closes `db` and opens the same data again (for PGlite, the same folder). */
  reopen(): Promise<SqlDatabase>;
  dispose(): Promise<void>;
}

export async function exampleDatabase(kind: DatabaseKind): Promise<ExampleDatabase> {
  const tables = parseTables(config.data.postgres!.tables);
  if (kind.name === 'pglite') {
    const { db, dataDir } = await openPgliteCopy();
    await migrate(db, tables, [...MIGRATIONS, ...migrations]);
    let current = db;
    return {
      db,
      reopen: async () => (await current.close(), (current = await openPglite({ dataDir }))),
      dispose: async () => (await current.close(), rmSync(dataDir, { recursive: true, force: true })),
    };
  }
  const name = `example_${randomBytes(4).toString('hex')}`;
  const admin = connectPg({ connectionString: pgUrl(), max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(pgUrl());
  url.pathname = `/${name}`;
  const db = connectPg({ connectionString: url.toString() });
  await migrate(db, tables, [...MIGRATIONS, ...migrations]);
  const opened = [db];
  return {
    db,
    reopen: async () => {
      const again = connectPg({ connectionString: url.toString() });
      opened.push(again);
      return again;
    },
    dispose: async () => {
      for (const each of opened) await each.close();
      await admin.query(`DROP DATABASE ${name}`);
      await admin.close();
    },
  };
}
