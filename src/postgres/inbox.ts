/**
 * The transactional inbox: which (consumer, event) pairs were handled. `record` inside the
 * handler's transaction tells a first delivery from a redelivery; `handle` runs the whole
 * pattern — inbox row and the caller's work in ONE transaction — and answers in the
 * handler's vocabulary (SPEC §4):
 *   committed              → returns undefined (the entry is acked)
 *   already in the inbox   → returns 'duplicate' (acked; `work` did not run)
 *   Rejection from `work`  → rolled back, rethrown (dead-lettered)
 *   anything else          → rolled back (or uncertain), thrown (retained): conflicts
 *                            (40001, 40P01), lost connections and a COMMIT whose reply never
 *                            came are PostgresErrors; the redelivery's `record` finds the row
 *                            exactly when that first commit landed.
 *
 * @example
 *   handler: ({ eventId }) => inbox.handle(db, { consumer: 'billing', eventId }, async (tx) => {
 *     await tx.query('UPDATE accounts SET balance = balance + $1 WHERE id = $2', [amount, id]);
 *   }),
 */
import type { SqlDatabase, SqlTx, TransactionOptions } from './sql';
import type { Tables } from './tables';

export interface InboxKey {
  /** Who handled it: a consumer group or participant name (one inbox table serves many). */
  readonly consumer: string;
  /** The entry's `event_id` (for saga envelopes: command_id / result_id). */
  readonly eventId: string;
}

export interface Inbox {
  /** Inserts the inbox row in `tx`: 'recorded' the first time, 'duplicate' when it exists. */
  record(tx: SqlTx, key: InboxKey): Promise<'recorded' | 'duplicate'>;
  /** `work` and the inbox row in one transaction of `db`; see the module comment for outcomes. */
  handle(db: SqlDatabase, key: InboxKey, work: (tx: SqlTx) => Promise<void>, options?: TransactionOptions): Promise<undefined | 'duplicate'>;
}

export function createInbox(tables: Tables): Inbox {
  const insert = `INSERT INTO ${tables.inbox} (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1 AS recorded`;
  const record: Inbox['record'] = async (tx, { consumer, eventId }) => {
    if (!consumer || !eventId) throw new TypeError('inbox key needs a non-empty consumer and eventId');
    // A concurrent first delivery holding the same key makes this INSERT wait for its
    // outcome: its commit turns ours into a duplicate, its rollback lets ours insert.
    return (await tx.query(insert, [consumer, eventId])).length === 1 ? 'recorded' : 'duplicate';
  };
  return {
    record,
    handle: (db, key, work, options) =>
      db.transaction(async (tx) => {
        if ((await record(tx, key)) === 'duplicate') return 'duplicate' as const;
        await work(tx);
        return undefined;
      }, options),
  };
}
