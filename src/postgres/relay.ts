/**
 * The outbox relay: publishes committed outbox rows through the signed publisher, in
 * batches, and marks them sent — in one transaction per pass:
 *   1. claim the oldest unsent rows `FOR UPDATE SKIP LOCKED` (a concurrent relay takes
 *      other rows instead of publishing these twice);
 *   2. hold back every row of an ordering key that has an earlier unsent row this pass does
 *      not hold (claimed by another relay, or refused): one key's events go out in id order.
 *      Id order is the key's enqueue order, and an earlier row of the key that this pass
 *      cannot see is impossible: its transaction ended before the later row's could take
 *      its id (the enqueue's key lock, outbox.ts). Across relays: a row another relay holds
 *      is unsent until that relay commits, so this check (a fresh snapshot, after the
 *      claim) sees it unsent or sent, and a later row goes out only after it was published;
 *   3. publish runs of consecutive rows per producer (one round trip each);
 *   4. mark them sent, commit.
 * A crash after 3 and before 4's commit leaves the rows unsent: the next pass publishes them
 * again under the same event ids, which the publish dedupe window and the consumer's inbox
 * absorb. A row the publisher refuses outright (unknown route, invalid event, unknown
 * producer) can never succeed: it is marked refused (`refused_at`, `refusal`) and keeps
 * blocking its key's later rows until an operator clears it.
 */
import { errorCode } from '../ground/errors';
import type { Publisher } from '../publish/publisher';
import type { SqlDatabase, SqlTx } from './sql';
import type { Tables } from './tables';

export const DEFAULT_RELAY_BATCH = 100;
export const MAX_RELAY_BATCH = 1_000;
/** Publisher errors that no retry can fix: the row is refused instead of retried forever. */
const REFUSALS = new Set(['PUBLISH_ROUTE_UNKNOWN', 'PUBLISH_EVENT_INVALID']);

export interface RelayOptions {
  /** Rows per pass (1..=1000, default 100). */
  readonly batch?: number;
  /** Epoch ms after which no new pass starts (default: one pass only). */
  readonly deadline?: number;
  readonly now?: () => number;
}

export interface RelayReport {
  readonly passes: number;
  /** Rows published and marked sent. */
  readonly published: number;
  /** Of those, how many the publish dedupe window already held (an earlier pass's publish). */
  readonly duplicates: number;
  /** Rows held back this run because an earlier row of their key was not published yet. */
  readonly heldBack: number;
  readonly refused: number;
}

/** The publisher signing as `producer`, or undefined when the deployment has no such producer. */
export type PublisherLookup = (producer: string) => Publisher | undefined;

interface OutboxRow {
  readonly id: string;
  readonly producer: string;
  readonly event_type: string;
  readonly event_id: string;
  readonly payload: Uint8Array;
  readonly traceparent: string | null;
  readonly ordering_key: string | null;
}

interface PassResult {
  readonly claimed: number;
  readonly published: number;
  readonly duplicates: number;
  readonly heldBack: number;
  readonly refused: number;
  /** A transient publish failure, rethrown after the rows before it were marked sent. */
  readonly failure?: unknown;
}

async function claim(tx: SqlTx, tables: Tables, batch: number): Promise<OutboxRow[]> {
  return tx.query<OutboxRow & Record<string, unknown>>(
    // ORDER BY o.id, the bigint: the output column `id` is text and would sort '10' < '9'.
    `SELECT o.id::text AS id, producer, event_type, event_id, payload, traceparent, ordering_key FROM ${tables.outbox} o ` +
      `WHERE sent_at IS NULL AND refused_at IS NULL ORDER BY o.id LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [batch],
  );
}

/** Rows whose key has no earlier unsent row outside this pass, in id order. */
async function inOrder(tx: SqlTx, tables: Tables, rows: OutboxRow[]): Promise<OutboxRow[]> {
  const keys = [...new Set(rows.flatMap((row) => (row.ordering_key === null ? [] : [row.ordering_key])))];
  if (keys.length === 0) return rows;
  const blockers = await tx.query<{ ordering_key: string; first: string }>(
    `SELECT ordering_key, min(id)::text AS first FROM ${tables.outbox} ` +
      `WHERE sent_at IS NULL AND ordering_key = ANY($1::text[]) AND NOT (id = ANY($2::bigint[])) GROUP BY ordering_key`,
    [keys, rows.map((row) => row.id)],
  );
  const firstOutside = new Map(blockers.map((b) => [b.ordering_key, BigInt(b.first)]));
  return rows.filter((row) => {
    const first = row.ordering_key === null ? undefined : firstOutside.get(row.ordering_key);
    return first === undefined || BigInt(row.id) < first;
  });
}

/** Consecutive rows with one producer: each run is one publish round trip, in id order. */
function runsByProducer(rows: readonly OutboxRow[]): OutboxRow[][] {
  const runs: OutboxRow[][] = [];
  for (const row of rows) {
    const last = runs[runs.length - 1];
    if (last && last[0]!.producer === row.producer) last.push(row);
    else runs.push([row]);
  }
  return runs;
}

const eventOf = (row: OutboxRow) => ({
  eventType: row.event_type,
  eventId: row.event_id,
  payload: row.payload,
  ...(row.traceparent === null ? {} : { traceparent: row.traceparent }),
});

async function relayPass(db: SqlDatabase, tables: Tables, publisherFor: PublisherLookup, batch: number): Promise<PassResult> {
  return db.transaction(async (tx) => {
    const claimed = await claim(tx, tables, batch);
    const ready = await inOrder(tx, tables, claimed);
    const sent: string[] = [];
    const refused: Array<{ id: string; refusal: string }> = [];
    const blockedKeys = new Set<string>();
    let duplicates = 0;
    let failure: unknown;
    for (const run of runsByProducer(ready)) {
      // A row refused earlier in this pass blocks its key's later rows here too.
      const rows = run.filter((row) => row.ordering_key === null || !blockedKeys.has(row.ordering_key));
      const publisher = publisherFor(run[0]!.producer);
      if (!publisher) {
        for (const row of rows) refused.push({ id: row.id, refusal: 'PRODUCER_UNKNOWN' });
        for (const row of rows) if (row.ordering_key !== null) blockedKeys.add(row.ordering_key);
        continue;
      }
      try {
        const results = await publisher.publishBatch(rows.map(eventOf));
        duplicates += results.filter((r) => r.duplicate).length;
        sent.push(...rows.map((row) => row.id));
      } catch (error) {
        if (!REFUSALS.has(errorCode(error) ?? '')) {
          failure = error;
          break;
        }
        // The batch was refused before anything was sent: find the bad rows one by one.
        for (const row of rows) {
          if (row.ordering_key !== null && blockedKeys.has(row.ordering_key)) continue;
          try {
            if ((await publisher.publish(eventOf(row))).duplicate) duplicates += 1;
            sent.push(row.id);
          } catch (single) {
            const code = errorCode(single) ?? '';
            if (!REFUSALS.has(code)) throw single;
            refused.push({ id: row.id, refusal: code });
            if (row.ordering_key !== null) blockedKeys.add(row.ordering_key);
          }
        }
      }
    }
    if (sent.length > 0) await tx.query(`UPDATE ${tables.outbox} SET sent_at = now() WHERE id = ANY($1::bigint[])`, [sent]);
    for (const { id, refusal } of refused) {
      await tx.query(`UPDATE ${tables.outbox} SET refused_at = now(), refusal = $2 WHERE id = $1::bigint`, [id, refusal]);
    }
    return { claimed: claimed.length, published: sent.length, duplicates, heldBack: claimed.length - sent.length - refused.length, refused: refused.length, failure };
  });
}

export async function relayOutbox(db: SqlDatabase, tables: Tables, publisherFor: PublisherLookup, options: RelayOptions = {}): Promise<RelayReport> {
  const batch = options.batch ?? DEFAULT_RELAY_BATCH;
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_RELAY_BATCH) throw new RangeError(`relay batch must be 1..=${MAX_RELAY_BATCH}`);
  const now = options.now ?? Date.now;
  const total = { passes: 0, published: 0, duplicates: 0, heldBack: 0, refused: 0 };
  for (;;) {
    const pass = await relayPass(db, tables, publisherFor, batch);
    total.passes += 1;
    total.published += pass.published;
    total.duplicates += pass.duplicates;
    total.heldBack += pass.heldBack;
    total.refused += pass.refused;
    if (pass.failure !== undefined) throw pass.failure;
    // A full pass that moved nothing (everything held back) would spin: stop there too.
    const progressed = pass.published + pass.refused > 0;
    if (pass.claimed < batch || !progressed || options.deadline === undefined || now() >= options.deadline) return total;
  }
}
