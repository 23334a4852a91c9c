/**
 * node-postgres adapter (servers and Lambda): a `pg.Pool`; each transaction holds one
 * client from BEGIN to COMMIT. A client whose connection broke is destroyed, not returned
 * to the pool.
 *
 * @example
 *   const db = connectPg({ connectionString: process.env.DATABASE_URL! });
 */
import pg from 'pg';
import { classifyDatabaseError, PostgresError } from './errors';
import type { SqlDatabase } from './sql';
import { commitWith, runTransaction } from './transaction';

export interface PgOptions {
  readonly connectionString: string;
  /** Pool size (default 4; a Lambda container handles one invocation at a time: 1–2 is enough). */
  readonly max?: number;
  /** Fail a connect attempt after this long (default 5 s) instead of hanging the run. */
  readonly connectTimeoutMs?: number;
  /** Server-side limit per statement (default 30 s). */
  readonly statementTimeoutMs?: number;
}

export const PG_DEFAULTS = { max: 4, connectTimeoutMs: 5_000, statementTimeoutMs: 30_000 } as const;

// bytea reads back as a Buffer (a Uint8Array); int8 stays a string (no precision loss).
async function runOn(client: pg.PoolClient | pg.Pool, text: string, params?: readonly unknown[]) {
  try {
    return (await client.query(text, params as unknown[] | undefined)).rows as Record<string, unknown>[];
  } catch (error) {
    throw classifyDatabaseError(error);
  }
}

export function connectPg(options: PgOptions): SqlDatabase {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? PG_DEFAULTS.max,
    connectionTimeoutMillis: options.connectTimeoutMs ?? PG_DEFAULTS.connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs ?? PG_DEFAULTS.statementTimeoutMs,
  });
  // An idle client losing its connection emits 'error' on the pool; the pool drops it.
  pool.on('error', () => {});

  return {
    driver: 'pg',
    query: (text, params) => runOn(pool, text, params) as never,
    async transaction(work, txOptions) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw new PostgresError('DB_UNAVAILABLE', 'could not connect to the database', { cause: error });
      }
      let broken: Error | undefined;
      const onError = (error: Error) => (broken = error);
      client.on('error', onError);
      const session = {
        run: async (text: string, params?: readonly unknown[]) => {
          try {
            return await runOn(client, text, params);
          } catch (error) {
            if ((error as PostgresError).code !== 'DB_QUERY_FAILED' && (error as PostgresError).code !== 'DB_CONFLICT') broken = error as Error;
            throw error;
          }
        },
        commit: async () => {
          try {
            const reply = await commitWith(() => client.query('COMMIT'));
            return reply.command === 'ROLLBACK' ? ('rolled back' as const) : ('committed' as const);
          } catch (error) {
            const code = (error as PostgresError).code;
            if (code === 'DB_COMMIT_UNCERTAIN' || code === 'DB_UNAVAILABLE') broken = error as Error;
            throw error;
          }
        },
      };
      try {
        return await runTransaction(session, work, txOptions);
      } finally {
        client.off('error', onError);
        client.release(broken ?? undefined);
      }
    },
    close: () => pool.end(),
  };
}
