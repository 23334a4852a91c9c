/**
 * Database failures, as typed errors with a stable `code`. None of them is a Rejection, so
 * an entry whose handler throws one is retained (SPEC §4): a conflict, a lost connection or
 * a commit whose outcome is unknown is transient, and the redelivery's inbox lookup tells
 * whether the first attempt's commit landed.
 */

export type PostgresErrorCode =
  /** Connecting failed, or the connection broke before COMMIT was sent: nothing committed. */
  | 'DB_UNAVAILABLE'
  /** The connection broke while COMMIT was in flight: it may or may not have landed. */
  | 'DB_COMMIT_UNCERTAIN'
  /** Serialization failure (40001) or deadlock (40P01): rolled back, safe to run again. */
  | 'DB_CONFLICT'
  /** The server refused a statement (any other SQLSTATE); `sqlState` says which. */
  | 'DB_QUERY_FAILED'
  /** A deployment job needs a database and the platform entry point gave it none. */
  | 'DB_NOT_CONFIGURED';

export class PostgresError extends Error {
  readonly code: PostgresErrorCode;
  /** The server's SQLSTATE, when the server answered. */
  readonly sqlState: string | undefined;

  constructor(code: PostgresErrorCode, message: string, options: { cause?: unknown; sqlState?: string } = {}) {
    super(message, { cause: options.cause });
    this.name = 'PostgresError';
    this.code = code;
    this.sqlState = options.sqlState;
  }
}

/** SQLSTATEs after which the transaction was rolled back and running it again may succeed. */
const CONFLICT_STATES = new Set(['40001', '40P01']);
/**
 * Classes meaning the connection or the server went away (08 connection exception, 57P01..03
 * admin/crash shutdown, cannot connect now), not that this statement was wrong.
 */
const UNAVAILABLE_STATE = /^(08|57P0[1-3])/;

function sqlStateOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Maps a driver error to a PostgresError; `duringCommit` marks a COMMIT whose reply never came. */
export function classifyDatabaseError(error: unknown, duringCommit = false): PostgresError {
  if (error instanceof PostgresError) return error;
  const sqlState = sqlStateOf(error);
  const reason = error instanceof Error ? error.message : String(error);
  if (sqlState !== undefined && CONFLICT_STATES.has(sqlState)) {
    return new PostgresError('DB_CONFLICT', `transaction rolled back by a conflict (${sqlState}); retry it: ${reason}`, { cause: error, sqlState });
  }
  const connectionLost = sqlState === undefined || UNAVAILABLE_STATE.test(sqlState);
  if (connectionLost && duringCommit) {
    return new PostgresError('DB_COMMIT_UNCERTAIN', `connection lost during COMMIT; the outcome is unknown: ${reason}`, { cause: error, sqlState });
  }
  if (connectionLost) return new PostgresError('DB_UNAVAILABLE', `database unavailable: ${reason}`, { cause: error, sqlState });
  return new PostgresError('DB_QUERY_FAILED', `statement failed (${sqlState}): ${reason}`, { cause: error, sqlState });
}
