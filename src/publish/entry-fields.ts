/**
 * An event turned into the fields of its stream entry (SPEC §3.1), signed when the route
 * is an hmac route. Everything about an event that can be wrong is checked here, before
 * anything is sent, so an unusable event never reaches Redis.
 */
import { bytesOf } from '../auth/canonical';
import type { HmacEngine } from '../auth/hmac';
import { signEntry } from '../auth/signature';
import { Fields } from '../entry/entry';
import { isValidEventId } from '../entry/keys';
import type { RedisArg, Transport } from '../redis/port';
import { isWellFormedUtf8 } from '../ground/text';
import type { PublishRoute } from './config';
import { PublishError } from './errors';
import { isValidTraceparent } from '../telemetry/traceparent';
import type { ScheduleOptions } from '../schedule/due-time';

/**
 * One event to publish. With `deliverAt` or `delayMs` (ScheduleOptions, SPEC §5.6) it is
 * signed now and kept in the stream's schedule until its due time; without, appended now.
 */
export interface PublishEvent extends ScheduleOptions {
  /** The routing key: decides the stream. */
  readonly eventType: string;
  /** Globally unique; the consumer's only deduplication identity. */
  readonly eventId: string;
  /** Envelope bytes; a string is sent as its UTF-8 bytes. */
  readonly payload: Uint8Array | string;
  /** W3C traceparent, reaching the consumer's handler (and covered by the signature). */
  readonly traceparent?: string;
}

export interface PreparedEntry {
  readonly event: PublishEvent;
  readonly route: PublishRoute;
  /** Field, value pairs in wire order. */
  readonly fields: RedisArg[];
}

export function routeOf(routes: ReadonlyMap<string, PublishRoute>, event: PublishEvent): PublishRoute {
  const route = typeof event.eventType === 'string' ? routes.get(event.eventType) : undefined;
  if (!route) throw new PublishError('PUBLISH_ROUTE_UNKNOWN', `no route for event type ${JSON.stringify(String(event.eventType))}`);
  return route;
}

/**
 * Refuses an event a consumer could not handle, naming the field. The event id rule is the
 * consumer's (SPEC §3.4): 1..=256 printable ASCII characters are exactly the ids whose UTF-8
 * bytes a consumer admits, so nothing published is dead-lettered `event_id_invalid` — a BOM
 * or any other character outside printable ASCII is refused here, never sent.
 */
export function checkEvent(event: PublishEvent, transport: Transport): void {
  if (typeof event.eventId !== 'string' || !isValidEventId(event.eventId)) {
    throw new PublishError('PUBLISH_EVENT_INVALID', 'event_id must be 1..=256 printable ASCII characters without spaces', { field: Fields.eventId });
  }
  if (!(event.payload instanceof Uint8Array) && typeof event.payload !== 'string') {
    throw new PublishError('PUBLISH_EVENT_INVALID', `payload of ${event.eventId} must be a Uint8Array or a string`, { field: Fields.payload });
  }
  // REST carries values as JSON strings: bytes that are not UTF-8 would arrive altered and
  // their signature would no longer verify. Refuse them here rather than corrupt them.
  if (transport === 'rest' && event.payload instanceof Uint8Array && !isWellFormedUtf8(event.payload)) {
    throw new PublishError(
      'PUBLISH_EVENT_INVALID',
      `payload of ${event.eventId} is not valid UTF-8, which the REST transport cannot carry byte-for-byte: publish it over TCP or encode it`,
      { field: Fields.payload },
    );
  }
  if (event.traceparent !== undefined && !isValidTraceparent(event.traceparent)) {
    throw new PublishError('PUBLISH_EVENT_INVALID', `traceparent of ${event.eventId} is not a valid W3C traceparent`, { field: Fields.traceparent });
  }
}

export async function prepareEntry(route: PublishRoute, event: PublishEvent, hmac?: HmacEngine): Promise<PreparedEntry> {
  const payload = bytesOf(event.payload);
  const fields: RedisArg[] = [Fields.event, event.eventType, Fields.eventId, event.eventId, Fields.payload, payload];
  if (event.traceparent !== undefined) fields.push(Fields.traceparent, event.traceparent);
  if (route.auth.mode === 'hmac') {
    const sig = await signEntry(route.auth.key, {
      stream: route.stream,
      eventId: event.eventId,
      eventType: event.eventType,
      payload,
      traceparent: event.traceparent,
    }, hmac);
    fields.push(Fields.keyId, route.auth.keyId, Fields.sig, sig);
  }
  return { event, route, fields };
}
