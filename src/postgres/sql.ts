/**
 * The driver-neutral SQL surface everything in saga-streams/postgres is written against:
 * `query(text, params) → rows` and a transaction runner. Adapters: node-postgres
 * (`connectPg`, servers and Lambda) and PGlite (`openPglite`, local development).
 *
 * Rules every adapter keeps: parameters are `$1…$n`; `bytea` columns read back as
 * `Uint8Array`; `bigint` columns read back as strings; a failure inside `transaction`
 * rolls back and rethrows it as a PostgresError (errors.ts) unless it is the caller's own
 * error (a Rejection stays a Rejection); a lost connection while COMMIT is in flight is
 * `DB_COMMIT_UNCERTAIN`, never reported as success or as a clean rollback.
 */

export type SqlRow = Record<string, unknown>;

export interface SqlQueryable {
  query<R extends SqlRow = SqlRow>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

/** A transaction in progress; only valid inside the `transaction` callback that received it. */
export type SqlTx = SqlQueryable;

export interface SqlDatabase extends SqlQueryable {
  readonly driver: 'pg' | 'pglite';
  /**
   * Runs `work` in one transaction (READ COMMITTED unless `isolation` says otherwise):
   * commits when it returns, rolls back when it throws. Never call the database itself
   * (rather than `tx`) from inside `work`: on PGlite that waits for this very transaction.
   */
  transaction<T>(work: (tx: SqlTx) => Promise<T>, options?: TransactionOptions): Promise<T>;
  close(): Promise<void>;
}

export interface TransactionOptions {
  readonly isolation?: 'read committed' | 'repeatable read' | 'serializable';
}

export function beginStatement(options: TransactionOptions | undefined): string {
  return options?.isolation ? `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}` : 'BEGIN';
}
