/**
 * Expiry of inbox rows and of sent outbox rows, in bounded batches so one run never holds a
 * long lock. An inbox row must outlive every redelivery it stands guard against, so its age
 * limit is checked against the deployment's retention (define-config: never shorter than the
 * DLT retention or the publish dedupe window); a pending entry older than it would be handled
 * again — the oldest-pending alarm fires long before that.
 */
import type { SqlDatabase } from './sql';
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
}

async function deleteInBatches(db: SqlDatabase, statement: string, ageSeconds: number, batch: number): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < MAX_PRUNE_BATCHES; i += 1) {
    const rows = await db.query(statement, [ageSeconds, batch]);
    deleted += rows.length;
    if (rows.length < batch) break;
  }
  return deleted;
}

export async function pruneTables(db: SqlDatabase, tables: Tables, options: PruneOptions): Promise<PruneReport> {
  const batch = options.batch ?? DEFAULT_PRUNE_BATCH;
  const inbox =
    `DELETE FROM ${tables.inbox} WHERE (consumer, event_id) IN (SELECT consumer, event_id FROM ${tables.inbox} ` +
    `WHERE recorded_at < now() - make_interval(secs => $1) LIMIT $2) RETURNING 1`;
  const outbox =
    `DELETE FROM ${tables.outbox} WHERE id IN (SELECT id FROM ${tables.outbox} ` +
    `WHERE sent_at < now() - make_interval(secs => $1) LIMIT $2) RETURNING 1`;
  return {
    inboxDeleted: await deleteInBatches(db, inbox, options.inboxRetentionSeconds, batch),
    outboxDeleted: await deleteInBatches(db, outbox, options.sentRetentionSeconds, batch),
  };
}
