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
 *
 * Rows due later and cancel rows (outbox.ts, SPEC §5.6). A row with `deliver_at` is
 * published with it as `deliverAt` — signed now, kept in the stream's schedule until then
 * (at once when that instant has passed) — in its place in the key's id order, like any row.
 * A cancel row runs `cancelScheduled` on the stream its event type routes to, in its place
 * too: after the rows before it, so it finds its key's scheduling row handed over. Whether it
 * removed the event (`cancelsApplied`) or found it gone (`cancelsMissed`: moved into the
 * stream already, i.e. delivered), the row is done and marked sent. Replayed after a crash, a
 * scheduling row is a duplicate of the schedule entry (or, cancelled inside the dedupe window,
 * of its `cancelled@` record); a cancel replayed is a miss. Cancels need the Redis port
 * (`options.port`); a pass that meets one without it fails, as a publish that cannot reach
 * Redis does.
 */
import { ConfigError, errorCode } from '../ground/errors';
import { flowKeyIfUsable } from '../publish/entry-fields';
import type { Publisher } from '../publish/publisher';
import type { RedisPort } from '../redis/port';
import { cancelScheduled } from '../schedule/cancel';
import type { SqlDatabase, SqlTx } from './sql';
import type { Tables } from './tables';

export const DEFAULT_RELAY_BATCH = 100;
export const MAX_RELAY_BATCH = 1_000;
/**
 * Publisher errors that no retry can fix: the row is refused instead of retried forever. A
 * due time the publisher refuses (beyond its maxDelayMs; a stream that cannot hold a schedule
 * on Cluster) is one: the row would block its key until an operator looks anyway.
 */
const REFUSALS = new Set(['PUBLISH_ROUTE_UNKNOWN', 'PUBLISH_EVENT_INVALID', 'PUBLISH_SCHEDULE_INVALID', 'PUBLISH_SCHEDULE_UNSUPPORTED']);

export interface RelayOptions {
  /** Rows per pass (1..=1000, default 100). */
  readonly batch?: number;
  /** Epoch ms after which no new pass starts (default: one pass only). */
  readonly deadline?: number;
  readonly now?: () => number;
  /** The Redis the publishers write to: cancel rows cancel scheduled events there. */
  readonly port?: RedisPort;
}

export interface RelayReport {
  readonly passes: number;
  /** Rows published and marked sent (rows due later included: handed to the schedule). */
  readonly published: number;
  /** Of those, how many the publish dedupe window already held (an earlier pass's publish). */
  readonly duplicates: number;
  /** Of the published rows, how many carried a due time (scheduled, or appended at once when already due). */
  readonly scheduledPublished: number;
  /** Cancel rows that removed their event from the schedule (it will never be delivered). */
  readonly cancelsApplied: number;
  /** Cancel rows that found nothing to remove: the event had been moved into the stream (delivered) already. */
  readonly cancelsMissed: number;
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
  /** Due instant in whole ms since the epoch (rounded up: never early), or null: now. */
  readonly deliver_at_ms: string | null;
  /** A cancel row: the event_id of the scheduled event it cancels. */
  readonly cancels: string | null;
}

type PassCounts = Omit<RelayReport, 'passes'>;

interface PassResult extends PassCounts {
  readonly claimed: number;
  /** A transient failure (publish or cancel), rethrown after the rows before it were marked sent. */
  readonly failure?: unknown;
}

async function claim(tx: SqlTx, tables: Tables, batch: number): Promise<OutboxRow[]> {
  return tx.query<OutboxRow & Record<string, unknown>>(
    // ORDER BY o.id, the bigint: the output column `id` is text and would sort '10' < '9'.
    `SELECT o.id::text AS id, producer, event_type, event_id, payload, traceparent, ordering_key, cancels, ` +
      `ceil(extract(epoch FROM deliver_at) * 1000)::bigint::text AS deliver_at_ms FROM ${tables.outbox} o ` +
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

/**
 * The pass's work in id order: runs of consecutive publish rows with one producer (each run
 * one publish round trip), and each cancel row on its own.
 */
function stepsOf(rows: readonly OutboxRow[]): OutboxRow[][] {
  const steps: OutboxRow[][] = [];
  for (const row of rows) {
    const last = steps[steps.length - 1];
    const joins = last && row.cancels === null && last[0]!.cancels === null && last[0]!.producer === row.producer;
    if (joins) last.push(row);
    else steps.push([row]);
  }
  return steps;
}

/**
 * A row's ordering key is also the published entry's flow key (SPEC §5.7: the key a consumer
 * handles one entry at a time), when it can be one: a key enqueued before flow keys existed
 * that is empty or longer than a flow key may be is published without it, never refused.
 */
const eventOf = (row: OutboxRow) => ({
  eventType: row.event_type,
  eventId: row.event_id,
  payload: row.payload,
  ...(row.traceparent === null ? {} : { traceparent: row.traceparent }),
  ...flowKeyIfUsable(row.ordering_key),
  ...(row.deliver_at_ms === null ? {} : { deliverAt: Number(row.deliver_at_ms) }),
});

/** What one pass did so far; the rows to mark once it is over. */
class PassLedger {
  readonly sent: string[] = [];
  readonly refused: Array<{ id: string; refusal: string }> = [];
  readonly blockedKeys = new Set<string>();
  published = 0;
  duplicates = 0;
  scheduledPublished = 0;
  cancelsApplied = 0;
  cancelsMissed = 0;

  blocked(row: OutboxRow): boolean {
    return row.ordering_key !== null && this.blockedKeys.has(row.ordering_key);
  }

  markPublished(row: OutboxRow, duplicate: boolean): void {
    this.sent.push(row.id);
    this.published += 1;
    if (duplicate) this.duplicates += 1;
    if (row.deliver_at_ms !== null) this.scheduledPublished += 1;
  }

  /** A row refused blocks its key's later rows, in this pass too. */
  refuse(row: OutboxRow, refusal: string): void {
    this.refused.push({ id: row.id, refusal });
    if (row.ordering_key !== null) this.blockedKeys.add(row.ordering_key);
  }
}

async function publishRun(rows: OutboxRow[], publisher: Publisher, ledger: PassLedger): Promise<void> {
  try {
    const results = await publisher.publishBatch(rows.map(eventOf));
    rows.forEach((row, i) => ledger.markPublished(row, results[i]?.duplicate === true));
  } catch (error) {
    if (!REFUSALS.has(errorCode(error) ?? '')) throw error;
    // The batch was refused before anything was sent: find the bad rows one by one.
    for (const row of rows) {
      if (ledger.blocked(row)) continue;
      try {
        ledger.markPublished(row, (await publisher.publish(eventOf(row))).duplicate);
      } catch (single) {
        const code = errorCode(single) ?? '';
        if (!REFUSALS.has(code)) throw single;
        ledger.refuse(row, code);
      }
    }
  }
}

async function cancelRow(row: OutboxRow, publisher: Publisher, port: RedisPort | undefined, ledger: PassLedger): Promise<void> {
  const route = publisher.config.routes.get(row.event_type);
  if (!route) return ledger.refuse(row, 'PUBLISH_ROUTE_UNKNOWN');
  if (!port) throw new ConfigError('outbox relay', [{ path: 'port', message: `cancel row ${row.id} needs the Redis port the publishers write to` }]);
  try {
    const outcome = await cancelScheduled(port, route.stream, row.cancels!, { dedupePrefix: route.dedupePrefix });
    if (outcome.status === 'cancelled') ledger.cancelsApplied += 1;
    else ledger.cancelsMissed += 1;
    ledger.sent.push(row.id);
  } catch (error) {
    // A stream that cannot hold a schedule (Cluster without a hash tag) never will.
    if (errorCode(error) !== 'CONFIG_INVALID') throw error;
    ledger.refuse(row, 'PUBLISH_SCHEDULE_UNSUPPORTED');
  }
}

async function relayPass(db: SqlDatabase, tables: Tables, publisherFor: PublisherLookup, batch: number, port: RedisPort | undefined): Promise<PassResult> {
  return db.transaction(async (tx) => {
    const claimed = await claim(tx, tables, batch);
    const ready = await inOrder(tx, tables, claimed);
    const ledger = new PassLedger();
    let failure: unknown;
    for (const step of stepsOf(ready)) {
      // A row refused earlier in this pass blocks its key's later rows here too.
      const rows = step.filter((row) => !ledger.blocked(row));
      if (rows.length === 0) continue;
      const publisher = publisherFor(rows[0]!.producer);
      try {
        if (!publisher) for (const row of rows) ledger.refuse(row, 'PRODUCER_UNKNOWN');
        else if (rows[0]!.cancels !== null) await cancelRow(rows[0]!, publisher, port, ledger);
        else await publishRun(rows, publisher, ledger);
      } catch (error) {
        failure = error;
        break;
      }
    }
    if (ledger.sent.length > 0) await tx.query(`UPDATE ${tables.outbox} SET sent_at = now() WHERE id = ANY($1::bigint[])`, [ledger.sent]);
    for (const { id, refusal } of ledger.refused) {
      await tx.query(`UPDATE ${tables.outbox} SET refused_at = now(), refusal = $2 WHERE id = $1::bigint`, [id, refusal]);
    }
    const { published, duplicates, scheduledPublished, cancelsApplied, cancelsMissed } = ledger;
    const refused = ledger.refused.length;
    return { claimed: claimed.length, published, duplicates, scheduledPublished, cancelsApplied, cancelsMissed, heldBack: claimed.length - ledger.sent.length - refused, refused, failure };
  });
}

export async function relayOutbox(db: SqlDatabase, tables: Tables, publisherFor: PublisherLookup, options: RelayOptions = {}): Promise<RelayReport> {
  const batch = options.batch ?? DEFAULT_RELAY_BATCH;
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_RELAY_BATCH) throw new RangeError(`relay batch must be 1..=${MAX_RELAY_BATCH}`);
  const now = options.now ?? Date.now;
  const total = { passes: 0, published: 0, duplicates: 0, scheduledPublished: 0, cancelsApplied: 0, cancelsMissed: 0, heldBack: 0, refused: 0 };
  for (;;) {
    const pass = await relayPass(db, tables, publisherFor, batch, options.port);
    total.passes += 1;
    for (const field of ['published', 'duplicates', 'scheduledPublished', 'cancelsApplied', 'cancelsMissed', 'heldBack', 'refused'] as const) total[field] += pass[field];
    if (pass.failure !== undefined) throw pass.failure;
    // A full pass that moved nothing (everything held back) would spin: stop there too.
    const done = pass.published + pass.cancelsApplied + pass.cancelsMissed + pass.refused;
    if (pass.claimed < batch || done === 0 || options.deadline === undefined || now() >= options.deadline) return total;
  }
}
