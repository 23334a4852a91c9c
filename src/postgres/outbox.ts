/**
 * The transactional outbox: `enqueue` writes an event to publish in the same transaction as
 * the state change that decided it, so the event exists exactly when the change committed.
 * The relay (relay.ts) publishes committed rows through the signed publisher afterwards.
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

export function createOutbox(tables: Tables): Outbox {
  const insert =
    `INSERT INTO ${tables.outbox} (producer, event_type, event_id, payload, ordering_key, traceparent) ` +
    `VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (event_id) DO NOTHING RETURNING 1 AS enqueued`;
  return {
    async enqueue(tx, event) {
      for (const field of ['producer', 'eventType', 'eventId'] as const) {
        if (typeof event[field] !== 'string' || event[field].length === 0) throw new TypeError(`outbox event needs a non-empty ${field}`);
      }
      const payload = typeof event.payload === 'string' ? utf8.encode(event.payload) : event.payload;
      const rows = await tx.query(insert, [event.producer, event.eventType, event.eventId, payload, event.orderingKey ?? null, event.traceparent ?? null]);
      return rows.length === 1 ? 'enqueued' : 'duplicate';
    },
  };
}
