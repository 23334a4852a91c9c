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
 * @example
 *   await outbox.enqueue(tx, { producer: 'payment', eventType: 'payment.result',
 *     eventId: `${command.command_id}:result`, payload: encodeResult(result), orderingKey: command.instance_id });
 */
import type { SqlTx } from './sql';
import type { Tables } from './tables';

export interface OutboxEvent {
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
}

export interface Outbox {
  enqueue(tx: SqlTx, event: OutboxEvent): Promise<'enqueued' | 'duplicate'>;
}

const utf8 = new TextEncoder();

const COLUMNS = '(producer, event_type, event_id, payload, ordering_key, traceparent)';

/** An event with no ordering key: nothing to order it against, no lock. */
function unkeyedInsert(tables: Tables): string {
  return `INSERT INTO ${tables.outbox} ${COLUMNS} VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING RETURNING 1 AS enqueued`;
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
    `SELECT $1::text, $2::text, $3::text, $4::bytea, $5::text, $6::text FROM (SELECT count(*) FROM key_lock) AS locked ` +
    `ON CONFLICT (event_id) DO NOTHING RETURNING 1 AS enqueued`
  );
}

export function createOutbox(tables: Tables): Outbox {
  const unkeyed = unkeyedInsert(tables);
  const keyed = keyedInsert(tables);
  return {
    async enqueue(tx, event) {
      for (const field of ['producer', 'eventType', 'eventId'] as const) {
        if (typeof event[field] !== 'string' || event[field].length === 0) throw new TypeError(`outbox event needs a non-empty ${field}`);
      }
      if (event.orderingKey != null && typeof event.orderingKey !== 'string') throw new TypeError('outbox event orderingKey must be a string when given');
      const payload = typeof event.payload === 'string' ? utf8.encode(event.payload) : event.payload;
      const insert = event.orderingKey == null ? unkeyed : keyed;
      const rows = await tx.query(insert, [event.producer, event.eventType, event.eventId, payload, event.orderingKey ?? null, event.traceparent ?? null]);
      return rows.length === 1 ? 'enqueued' : 'duplicate';
    },
  };
}
