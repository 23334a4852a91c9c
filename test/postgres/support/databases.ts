/**
 * The databases every Postgres suite runs against, like the Redis clients in
 * test/support/clients.ts: node-postgres on the run's PostgreSQL server (`pgUrl()`:
 * TEST_DATABASE_URL, or the private server test/support/postgres-setup.ts starts) and PGlite.
 * Each suite gets its own schema, so parallel runs never collide.
 *
 * PGlite's first start runs initdb in WebAssembly (15–30 s on this machine); later starts
 * copy a template data folder made once per machine and take ~2 s.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { connectPg } from '../../../src/postgres/pg';
import { openPglite } from '../../../src/postgres/pglite';
import type { SqlDatabase } from '../../../src/postgres/sql';
import { parseTables, type Tables } from '../../../src/postgres/tables';
import { migrate } from '../../../src/postgres/migrate';

/** The run's PostgreSQL server, from the project's global setup (test/support/postgres-setup.ts). */
export function pgUrl(): string {
  const url = inject('databaseUrl');
  if (!url) throw new Error('no PostgreSQL server in this vitest project: add test/support/postgres-setup.ts to its globalSetup (vitest.config.ts)');
  return url;
}

export interface DatabaseKind {
  readonly name: 'pg' | 'pglite';
  open(): Promise<SqlDatabase>;
}

export const pgKind: DatabaseKind = { name: 'pg', open: async () => connectPg({ connectionString: pgUrl() }) };

const PGLITE_TEMPLATE = join(tmpdir(), 'saga-streams-pglite-template-0.5.17');

/** A PGlite data folder after initdb, made once per machine (copy it; never open it in place). */
export async function pgliteTemplate(): Promise<string> {
  if (existsSync(join(PGLITE_TEMPLATE, 'PG_VERSION'))) return PGLITE_TEMPLATE;
  const building = `${PGLITE_TEMPLATE}.building-${process.pid}-${randomBytes(3).toString('hex')}`;
  const db = await openPglite({ dataDir: building });
  await db.close();
  try {
    renameSync(building, PGLITE_TEMPLATE);
  } catch {
    rmSync(building, { recursive: true, force: true }); // another worker won the race
  }
  return PGLITE_TEMPLATE;
}

/** A PGlite database in a fresh folder copied from the template (removed by `removeDir`). */
export async function openPgliteCopy(): Promise<{ db: SqlDatabase; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'saga-pglite-'));
  cpSync(await pgliteTemplate(), dataDir, { recursive: true });
  return { db: await openPglite({ dataDir }), dataDir };
}

export const pgliteKind: DatabaseKind = {
  name: 'pglite',
  open: async () => {
    const { db, dataDir } = await openPgliteCopy();
    return { ...db, close: async () => (await db.close(), rmSync(dataDir, { recursive: true, force: true })) };
  },
};

export const databaseKinds: DatabaseKind[] = [pgKind, pgliteKind];

export function uniqueSchema(): string {
  return `t_${randomBytes(5).toString('hex')}`;
}

/** A migrated unique schema on `db`; `drop()` removes it. */
export async function freshTables(db: SqlDatabase): Promise<{ tables: Tables; drop(): Promise<void> }> {
  const tables = parseTables({ schema: uniqueSchema() });
  await migrate(db, tables);
  return { tables, drop: async () => void (await db.query(`DROP SCHEMA ${tables.schema} CASCADE`)) };
}
