/**
 * What a handler gets from `context.postgres()`: the database with the inbox and outbox over
 * the configured tables. Only the shapes, so the consumer contract (consumers.ts) can name
 * them without reaching the code that opens a database from the deployment config
 * (postgres.ts), which needs that contract's config in turn.
 */
import type { Inbox } from '../postgres/inbox';
import type { Outbox } from '../postgres/outbox';
import type { SqlDatabase } from '../postgres/sql';
import type { Tables } from '../postgres/tables';

export interface Postgres {
  readonly db: SqlDatabase;
  readonly tables: Tables;
  readonly inbox: Inbox;
  readonly outbox: Outbox;
}

export interface PostgresContext {
  /** Opens the database; called at most once per runtime (again only after a failure). */
  open(): Promise<SqlDatabase>;
}
