/**
 * `saga-streams/postgres`: the transactional inbox and outbox over Postgres, the outbox relay,
 * inbox/outbox retention and the schema migrations. Driver-neutral (sql.ts); the node-postgres
 * adapter is here, the PGlite one (local development only) in `saga-streams/postgres/pglite`.
 *
 * @example
 *   const db = connectPg({ connectionString: process.env.DATABASE_URL! });
 *   const { inbox, outbox, tables } = createPostgresKit({ schema: 'app' });
 */
import { createInbox, type Inbox } from './inbox';
import { createOutbox, type Outbox } from './outbox';
import { parseTables, type Tables, type TablesInput } from './tables';

export { connectPg, PG_DEFAULTS, type PgOptions } from './pg';
export { PostgresError, classifyDatabaseError, type PostgresErrorCode } from './errors';
export type { SqlDatabase, SqlQueryable, SqlRow, SqlTx, TransactionOptions } from './sql';
export { createInbox, type Inbox, type InboxKey } from './inbox';
export { createOutbox, type Outbox, type OutboxEvent, type ScheduledEventRef } from './outbox';
export { relayOutbox, DEFAULT_RELAY_BATCH, MAX_RELAY_BATCH, type RelayOptions, type RelayReport, type PublisherLookup } from './relay';
export { pruneTables, type PruneOptions, type PruneReport } from './retention';
export { migrate, type MigrateReport } from './migrate';
export { MIGRATIONS, migrationScript, type Migration } from './migrations';
export { parseTables, tablesSchema, type Tables, type TableNames, type TablesInput } from './tables';

export interface PostgresKit {
  readonly tables: Tables;
  readonly inbox: Inbox;
  readonly outbox: Outbox;
}

/** The inbox and outbox over one set of (validated) table names. */
export function createPostgresKit(tables: TablesInput = {}): PostgresKit {
  const parsed = parseTables(tables);
  return { tables: parsed, inbox: createInbox(parsed), outbox: createOutbox(parsed) };
}
