/**
 * The local stack's database (config `postgres`): the server in the config's URL variable
 * (DATABASE_URL) when set, else PGlite on disk in `.saga-streams/pglite` under the working
 * folder (git-ignored), so state survives a restart with no database server. Migrations —
 * saga-streams' own, then the config module's `migrations` — are applied on start.
 * PGlite is for local development only: one process, and no fsync.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DeploymentConfig } from '../src/deployment/define-config';
import type { SecretEnv } from '../src/deployment/secrets';
import { migrate } from '../src/postgres/migrate';
import { MIGRATIONS, type Migration } from '../src/postgres/migrations';
import { connectPg } from '../src/postgres/pg';
import { openPglite } from '../src/postgres/pglite';
import type { SqlDatabase } from '../src/postgres/sql';
import { parseTables } from '../src/postgres/tables';

export const LOCAL_PGLITE_DIR = join('.saga-streams', 'pglite');

export interface LocalDatabase {
  readonly db: SqlDatabase;
  /** Where it is, for the start-up lines (never the URL: it may hold a password). */
  readonly display: string;
  readonly embedded: boolean;
}

export async function openLocalDatabase(
  config: DeploymentConfig,
  env: SecretEnv,
  options: { cwd: string; migrations?: readonly Migration[] },
): Promise<LocalDatabase | undefined> {
  const postgres = config.data.postgres;
  if (!postgres) return undefined;
  const url = env[postgres.urlEnv];
  let local: LocalDatabase;
  if (url) local = { db: connectPg({ connectionString: url }), display: `${postgres.urlEnv} (node-postgres)`, embedded: false };
  else {
    const dataDir = join(options.cwd, LOCAL_PGLITE_DIR);
    mkdirSync(dataDir, { recursive: true });
    local = { db: await openPglite({ dataDir }), display: `PGlite in ${LOCAL_PGLITE_DIR} (local development only)`, embedded: true };
  }
  try {
    await migrate(local.db, parseTables(postgres.tables), [...MIGRATIONS, ...(options.migrations ?? [])]);
  } catch (error) {
    await local.db.close();
    throw error;
  }
  return local;
}
