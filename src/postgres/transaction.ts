/**
 * The transaction protocol both adapters share: BEGIN, the caller's work, COMMIT — with the
 * failure cases named. Statements inside go through `run`, which already turns driver
 * errors into PostgresErrors, so whatever `work` throws is rethrown unchanged (a Rejection
 * stays a Rejection) once the rollback succeeded. A rollback that fails, or a COMMIT whose
 * reply never came, is reported as such: the caller must not assume a clean rollback.
 */
import { classifyDatabaseError, PostgresError } from './errors';
import { beginStatement, type SqlTx, type TransactionOptions } from './sql';

export interface Session {
  /** Runs one statement; throws a PostgresError on failure. */
  run(text: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * Runs COMMIT; a connection error here must surface as DB_COMMIT_UNCERTAIN. Answers whether
   * the server committed or — the transaction having been aborted by a failed statement the
   * work caught and went past — rolled back instead (Postgres answers such a COMMIT with
   * ROLLBACK, not an error).
   */
  commit(): Promise<'committed' | 'rolled back'>;
}

export async function runTransaction<T>(session: Session, work: (tx: SqlTx) => Promise<T>, options?: TransactionOptions): Promise<T> {
  await session.run(beginStatement(options));
  const tx: SqlTx = { query: (text, params) => session.run(text, params) as never };
  let result: T;
  try {
    result = await work(tx);
  } catch (error) {
    try {
      await session.run('ROLLBACK');
    } catch (rollbackError) {
      throw new PostgresError('DB_UNAVAILABLE', 'rollback failed after an error in the transaction', {
        cause: classifyDatabaseError(rollbackError),
      });
    }
    throw error;
  }
  if ((await session.commit()) === 'rolled back') {
    throw new PostgresError('DB_QUERY_FAILED', 'a statement failed inside the transaction and the work went on: COMMIT rolled back');
  }
  return result;
}

/** Commit through `send`, mapping a lost connection to DB_COMMIT_UNCERTAIN. */
export async function commitWith<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw classifyDatabaseError(error, true);
  }
}
