/**
 * `db migrate`: applies saga-streams' migrations (inbox, outbox) and then the config
 * module's `migrations` export, idempotently, recording each in the migrations table. The
 * database is the config's `postgres.urlEnv` (DATABASE_URL), or — when that is unset — the
 * local stack's PGlite folder. `--print` shows saga-streams' SQL for your own tool instead.
 */
import { join } from 'node:path';
import { LOCAL_PGLITE_DIR } from '../../local/local-database';
import { migrate } from '../../src/postgres/migrate';
import { MIGRATIONS, migrationScript, type Migration } from '../../src/postgres/migrations';
import { connectPg } from '../../src/postgres/pg';
import { openPglite } from '../../src/postgres/pglite';
import { parseTables } from '../../src/postgres/tables';
import type { CommandContext } from '../context';
import { UsageError } from '../exit-codes';

export async function dbMigrateCommand(ctx: CommandContext): Promise<void> {
  const { args, io, loaded } = ctx;
  if (args.positionals.length > 0) throw new UsageError('db migrate takes no arguments');
  const postgres = loaded.config.data.postgres;
  if (!postgres) throw new UsageError(`${loaded.config.name} has no postgres section: nothing to migrate`);
  const tables = parseTables(postgres.tables);
  if (args.flag('print')) return io.out(migrationScript(tables).trimEnd());

  const own = Array.isArray(loaded.module.migrations) ? (loaded.module.migrations as Migration[]) : [];
  const url = io.env[postgres.urlEnv];
  io.progress(url ? `migrating the database in ${postgres.urlEnv}…` : `${postgres.urlEnv} is unset: migrating the local PGlite in ${LOCAL_PGLITE_DIR}…`);
  const db = url ? connectPg({ connectionString: url }) : await openPglite({ dataDir: join(io.cwd, LOCAL_PGLITE_DIR) });
  try {
    const report = await migrate(db, tables, [...MIGRATIONS, ...own]);
    ctx.emit(report, () => [
      `applied ${report.applied.length} migration(s)${report.applied.length ? `: ${report.applied.join(', ')}` : ''}`,
      `already applied: ${report.alreadyApplied.length}`,
    ]);
  } finally {
    await db.close();
  }
}
