/**
 * Applies the migrations not yet recorded, in one transaction, under an advisory lock so two
 * migrators (two deploys, two test workers) never interleave. Idempotent: a second run finds
 * every id recorded and changes nothing.
 */
import { MIGRATIONS, type Migration } from './migrations';
import type { SqlDatabase } from './sql';
import type { Tables } from './tables';

export interface MigrateReport {
  readonly applied: readonly string[];
  readonly alreadyApplied: readonly string[];
}

export async function migrate(db: SqlDatabase, tables: Tables, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrateReport> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`saga-streams:${tables.migrations}`]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${tables.schema}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${tables.migrations} (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await tx.query<{ id: string }>(`SELECT id FROM ${tables.migrations}`)).map((row) => row.id));
    const applied: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      for (const statement of migration.statements(tables)) await tx.query(statement);
      await tx.query(`INSERT INTO ${tables.migrations} (id) VALUES ($1)`, [migration.id]);
      applied.push(migration.id);
    }
    return { applied, alreadyApplied: migrations.filter((m) => done.has(m.id)).map((m) => m.id) };
  });
}
