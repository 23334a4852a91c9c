/**
 * PGlite adapter (embedded Postgres in WebAssembly): the LOCAL DEVELOPMENT default, so the
 * local stack and tests run real SQL with no database server. Not for production: PGlite is
 * one connection in one process, and its Node file system does not fsync, so a machine crash
 * can lose committed transactions.
 *
 * PGlite has a single connection, so this adapter serializes every use of it: a statement
 * outside a transaction waits for the transaction in progress, and transactions run one at
 * a time. (Hence: inside `transaction`, use `tx`, never the database itself.)
 *
 * @example
 *   const db = await openPglite({ dataDir: '.saga-streams/pglite' });
 */
import { PGlite } from '@electric-sql/pglite';
import { classifyDatabaseError } from './errors';
import type { SqlDatabase, SqlRow } from './sql';
import { commitWith, runTransaction } from './transaction';

export interface PgliteOptions {
  /** A folder to keep the database in; omitted = in memory (gone when the process ends). */
  readonly dataDir?: string;
}

/** Runs tasks one at a time, in call order. */
function serializer() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(task, task);
    tail = run.catch(() => {});
    return run;
  };
}

export async function openPglite(options: PgliteOptions = {}): Promise<SqlDatabase> {
  const pglite = new PGlite(options.dataDir);
  await pglite.waitReady;
  const exclusive = serializer();

  const run = async (text: string, params?: readonly unknown[]) => {
    try {
      return (await pglite.query<SqlRow>(text, params as unknown[] | undefined)).rows;
    } catch (error) {
      throw classifyDatabaseError(error);
    }
  };

  return {
    driver: 'pglite',
    query: (text, params) => exclusive(() => run(text, params)) as never,
    transaction: (work, txOptions) =>
      exclusive(() => {
        // PGlite gives no COMMIT command tag: remember whether a statement failed (and was
        // not undone by ROLLBACK TO SAVEPOINT), which is exactly when COMMIT rolls back.
        let aborted = false;
        const session = {
          run: async (text: string, params?: readonly unknown[]) => {
            try {
              const rows = await run(text, params);
              if (/^\s*rollback\s+to\b/i.test(text)) aborted = false;
              return rows;
            } catch (error) {
              aborted = true;
              throw error;
            }
          },
          commit: async () => {
            const wasAborted = aborted;
            await commitWith(() => pglite.query('COMMIT'));
            return wasAborted ? ('rolled back' as const) : ('committed' as const);
          },
        };
        return runTransaction(session, work, txOptions);
      }),
    close: () => exclusive(() => pglite.close()),
  };
}
