/**
 * The transactional outbox: `enqueue` writes an event to publish in the same transaction as
 * the state change that decided it, so the event exists exactly when the change committed.
 * The relay (relay.ts) publishes committed rows through the signed publisher afterwards.
 *
 * Order of one ordering key (SPEC §6.1). An enqueue of key K locks K's row in the keys table
 * (inserting it the first time) and only then takes its outbox id, in one statement; the
 * lock lasts until the transaction ends, so a second transaction enqueueing K waits for the
 * first to commit or roll back before it takes its id. K's enqueue order — the order in which
 * its transactions got K, call order inside one — is therefore its id order, and every row
 * of K with a smaller id has committed or is gone before a later one can commit: the relay,
 * which sees committed rows only and publishes a key in id order, never passes a row of K
 * that may still commit. A rollback, or a connection the server sees die, frees K at once (a
 * client that vanishes without closing its socket holds K, like all its row locks, until the
 * server notices: idle_in_transaction_session_timeout bounds that).
 *
 * Cost: still one round trip; for a keyed event one primary-key probe and a row lock on the
 * key row (an insert the first time), no new row version. Enqueuers of different keys never
 * wait for each other. Two transactions enqueueing the same keys in opposite orders can
 * deadlock (40P01), and under REPEATABLE READ or SERIALIZABLE an enqueue of a key that an
 * overlapping transaction created first fails with 40001: both are DB_CONFLICT, rolled back,
 * safe to retry. Relies on the identity sequence handing out ids in call order across
 * sessions (CACHE 1, its default).
 *
 * Rows due later (SPEC §5.6). An event enqueued with `deliverAt` or `delayMs` carries its
 * due instant (`deliver_at`, migration 0003); the relay hands it to the stream's schedule
 * with that instant instead of appending it. It keeps its place in its key's order: the
 * relay schedules it after every earlier row of the key was published and before any later
 * one is — but it reaches the stream at its due time, so rows of the key enqueued after it
 * and published at once are delivered before it. What the outbox orders is the hand-over to
 * Redis, not the arrival of a row due later. A later row never waits for an earlier row's
 * due time. `enqueueCancel` writes a cancel row: the relay cancels the scheduled event it
 * names when its turn comes, so a cancel enqueued under the same ordering key, after the
 * scheduling row, always finds that row handed over first (and cancels it, unless it has
 * already been moved into the stream — then the cancel is a miss, and the event is
 * delivered).
 *
 * @example
 *   await outbox.enqueue(tx, { producer: 'payment', eventType: 'payment.result',
 *     eventId: `${command.command_id}:result`, payload: encodeResult(result), orderingKey: command.instance_id });
 *   // due later, and cancelled in a later transaction (saga timeouts: src/saga/timeouts.ts)
 *   await outbox.enqueue(tx, { ...event, deliverAt: Date.now() + 30_000 });
 *   await outbox.enqueueCancel(tx, { producer, eventType, eventId: event.eventId, orderingKey });
 */
import { isValidEventId } from '../entry/keys';
import { PublishError } from '../publish/errors';
import { checkDueTime, MAX_SCHEDULE_DELAY_MS, type ScheduleOptions } from '../schedule/due-time';
import type { SqlTx } from './sql';
import type { Tables } from './tables';

export interface OutboxEvent extends ScheduleOptions {
  /** The identity that signs it: the relay publishes with `publisherFor(producer)`. */
  readonly producer: string;
  readonly eventType: string;
  /** Unique: a second enqueue of the same id keeps the first (and answers 'duplicate'). */
  readonly eventId: string;
  /** Envelope bytes; a string is stored as its UTF-8 bytes. */
  readonly payload: string | Uint8Array;
  /** Events of one key (e.g. a saga instance id) are published in enqueue order. */
  readonly orderingKey?: string;
  readonly traceparent?: string;
  // ScheduleOptions: `deliverAt` (an instant) or `delayMs` (from now, by this process's clock,
  // as a stepTimeout counts) makes the row due later; neither publishes it at once.
}

/** A scheduled event to cancel: the stream is the one `eventType` routes to for `producer`. */
export interface ScheduledEventRef {
  readonly producer: string;
  readonly eventType: string;
  /** The scheduled event's event_id. */
  readonly eventId: string;
  /** Give the scheduling row's key, so the cancel is run after that row was handed over. */
  readonly orderingKey?: string;
}

export interface Outbox {
  enqueue(tx: SqlTx, event: OutboxEvent): Promise<'enqueued' | 'duplicate'>;
  /**
   * A cancel row in `tx`: after commit, the relay cancels the scheduled event `ref.eventId`
   * (cancelScheduled) in its key's turn. 'duplicate' when the same cancel is already enqueued.
   */
  enqueueCancel(tx: SqlTx, ref: ScheduledEventRef): Promise<'enqueued' | 'duplicate'>;
}

/** The prefix of a cancel row's own event_id: with its space, no publishable id can take it. */
export const CANCEL_ID_PREFIX = 'cancel ';

const utf8 = new TextEncoder();

const COLUMNS = '(producer, event_type, event_id, payload, ordering_key, traceparent, deliver_at, cancels)';

/** $7: the due instant in integer ms since the epoch (exact in a timestamptz), or NULL: now. */
const DELIVER_AT = "'epoch'::timestamptz + $7::bigint * interval '1 ms'";

/** An event with no ordering key: nothing to order it against, no lock. */
function unkeyedInsert(tables: Tables): string {
  return (
    `INSERT INTO ${tables.outbox} ${COLUMNS} VALUES ($1, $2, $3, $4, $5, $6, ${DELIVER_AT}, $8) ` +
    `ON CONFLICT (event_id) DO NOTHING RETURNING 1 AS enqueued`
  );
}

/**
 * Locks key $5's row, then inserts the event. The key row is upserted with an ON CONFLICT
 * DO UPDATE whose WHERE is false: Postgres locks the conflicting row (waiting for its holder)
 * and writes no new version. The outer INSERT reads the lock's result through an aggregate,
 * so its identity value is computed after the lock is held.
 */
function keyedInsert(tables: Tables): string {
  return (
    `WITH key_lock AS (INSERT INTO ${tables.outboxKeys} (ordering_key) VALUES ($5::text) ` +
    `ON CONFLICT (ordering_key) DO UPDATE SET ordering_key = EXCLUDED.ordering_key WHERE false RETURNING 1) ` +
    `INSERT INTO ${tables.outbox} ${COLUMNS} ` +
    `SELECT $1::text, $2::text, $3::text, $4::bytea, $5::text, $6::text, ${DELIVER_AT}, $8::text FROM (SELECT count(*) FROM key_lock) AS locked ` +
    `ON CONFLICT (event_id) DO NOTHING RETURNING 1 AS enqueued`
  );
}

function checkIdentity(event: { producer: unknown; eventType: unknown; eventId: unknown; orderingKey?: unknown }): void {
  for (const field of ['producer', 'eventType', 'eventId'] as const) {
    if (typeof event[field] !== 'string' || (event[field] as string).length === 0) throw new TypeError(`outbox event needs a non-empty ${field}`);
  }
  if (event.orderingKey != null && typeof event.orderingKey !== 'string') throw new TypeError('outbox event orderingKey must be a string when given');
}

/**
 * The due instant of an event (ms since the epoch), or null: now. Checked as the publisher
 * checks one — refused with the publisher's error, PUBLISH_SCHEDULE_INVALID naming the option
 * — against the schedule's own bound (365 days); a relay publisher with a tighter `maxDelayMs`
 * refuses the row when it gets to it.
 */
function dueMs(event: OutboxEvent): number | null {
  const now = Date.now();
  const check = checkDueTime(event, MAX_SCHEDULE_DELAY_MS, now);
  if (!check.ok) throw new PublishError('PUBLISH_SCHEDULE_INVALID', `outbox: ${check.message} (event ${event.eventId})`, { field: check.field });
  return check.due === undefined ? null : check.due.mode === 'at' ? check.due.ms : now + check.due.ms;
}

export function createOutbox(tables: Tables): Outbox {
  const unkeyed = unkeyedInsert(tables);
  const keyed = keyedInsert(tables);
  const insert = async (tx: SqlTx, row: readonly [string, string, string, Uint8Array, string | null, string | null, number | null, string | null]) => {
    const rows = await tx.query(row[4] === null ? unkeyed : keyed, row);
    return rows.length === 1 ? ('enqueued' as const) : ('duplicate' as const);
  };
  return {
    async enqueue(tx, event) {
      checkIdentity(event);
      const payload = typeof event.payload === 'string' ? utf8.encode(event.payload) : event.payload;
      return insert(tx, [event.producer, event.eventType, event.eventId, payload, event.orderingKey ?? null, event.traceparent ?? null, dueMs(event), null]);
    },
    async enqueueCancel(tx, ref) {
      checkIdentity(ref);
      // The row's own id embeds the target's: a target with a space could collide with another's.
      if (!isValidEventId(ref.eventId)) throw new PublishError('PUBLISH_EVENT_INVALID', 'outbox cancel: event_id must be 1..=256 printable ASCII characters without spaces', { field: 'event_id' });
      return insert(tx, [ref.producer, ref.eventType, CANCEL_ID_PREFIX + ref.eventId, new Uint8Array(0), ref.orderingKey ?? null, null, null, ref.eventId]);
    },
  };
}
