/**
 * Expiry of inbox rows and of sent outbox rows, in bounded batches so one run never holds a
 * long lock; then of the outbox key rows (outbox.ts) of keys left with no unsent row. A key
 * row is only a lock target, so deleting it is always safe: one an enqueuer holds is skipped
 * (SKIP LOCKED), and the key's next enqueue inserts it again. An inbox row must outlive every redelivery it stands guard against, so its age
 * limit is checked against the deployment's retention (define-config: never shorter than the
 * DLT retention or the publish dedupe window); a pending entry older than it would be handled
 * again — the oldest-pending alarm fires long before that.
 */
import type { SqlDatabase, SqlRow } from './sql';
import type { Tables } from './tables';

export const DEFAULT_PRUNE_BATCH = 1_000;
/** Batches per table per run: bounds one run's work; the next run continues. */
export const MAX_PRUNE_BATCHES = 10;

export interface PruneOptions {
  /** Inbox rows recorded longer ago than this are deleted. */
  readonly inboxRetentionSeconds: number;
  /** Outbox rows sent longer ago than this are deleted (unsent or refused rows never are). */
  readonly sentRetentionSeconds: number;
  readonly batch?: number;
}

export interface PruneReport {
  readonly inboxDeleted: number;
  readonly outboxDeleted: number;
  /** Outbox key rows deleted: keys of deleted rows that had no unsent row left. */
  readonly outboxKeysDeleted: number;
}

async function deleteInBatches(db: SqlDatabase, statement: string, ageSeconds: number, batch: number, deleted: (rows: SqlRow[]) => Promise<void> = async () => {}): Promise<number> {
  let count = 0;
  for (let i = 0; i < MAX_PRUNE_BATCHES; i += 1) {
    const rows = await db.query(statement, [ageSeconds, batch]);
    count += rows.length;
    await deleted(rows);
    if (rows.length < batch) break;
  }
  return count;
}

export async function pruneTables(db: SqlDatabase, tables: Tables, options: PruneOptions): Promise<PruneReport> {
  const batch = options.batch ?? DEFAULT_PRUNE_BATCH;
  const inbox =
    `DELETE FROM ${tables.inbox} WHERE (consumer, event_id) IN (SELECT consumer, event_id FROM ${tables.inbox} ` +
    `WHERE recorded_at < now() - make_interval(secs => $1) LIMIT $2) RETURNING 1`;
  const outbox =
    `DELETE FROM ${tables.outbox} WHERE id IN (SELECT id FROM ${tables.outbox} ` +
    `WHERE sent_at < now() - make_interval(secs => $1) LIMIT $2) RETURNING ordering_key`;
  const keys =
    `DELETE FROM ${tables.outboxKeys} WHERE ordering_key IN (SELECT k.ordering_key FROM ${tables.outboxKeys} k ` +
    `WHERE k.ordering_key = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM ${tables.outbox} o WHERE o.ordering_key = k.ordering_key AND o.sent_at IS NULL) ` +
    `FOR UPDATE SKIP LOCKED) RETURNING 1`;
  let outboxKeysDeleted = 0;
  const deleteKeysOf = async (rows: SqlRow[]) => {
    const emptied = [...new Set(rows.flatMap((row) => (typeof row.ordering_key === 'string' ? [row.ordering_key] : [])))];
    if (emptied.length > 0) outboxKeysDeleted += (await db.query(keys, [emptied])).length;
  };
  const inboxDeleted = await deleteInBatches(db, inbox, options.inboxRetentionSeconds, batch);
  const outboxDeleted = await deleteInBatches(db, outbox, options.sentRetentionSeconds, batch, deleteKeysOf);
  return { inboxDeleted, outboxDeleted, outboxKeysDeleted };
}
