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
import { decodeText, isWellFormedUtf8 } from '../ground/text';
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
  /**
   * The key whose entries a consumer handles one at a time across its fleet (SPEC §5.7): a
   * saga's instance id, an account, a tenant. Written as the entry's `flow_key` field, after
   * the signed fields and outside the signature (a consumer that checks it does so against
   * the signed payload). 1..=1024 UTF-8 bytes. Publish dedupe ignores it: a repeat of an
   * event_id with another flow key is a duplicate, and the first append's key stands.
   */
  readonly flowKey?: string;
}

/** Most UTF-8 bytes of a flow key: a hash field and sorted-set member in Redis, never a key name. */
export const MAX_FLOW_KEY_BYTES = 1024;

const utf8 = new TextEncoder();

/** Why this flow key cannot be published, or undefined when it can. */
export function flowKeyProblem(flowKey: unknown): string | undefined {
  if (typeof flowKey !== 'string') return 'must be a string';
  const bytes = utf8.encode(flowKey);
  // A lone surrogate has no UTF-8 bytes: it would reach Redis as U+FFFD, another key.
  if (decodeText(bytes) !== flowKey) return 'must be well-formed Unicode (no lone surrogates)';
  if (bytes.length === 0 || bytes.length > MAX_FLOW_KEY_BYTES) return `must be 1..=${MAX_FLOW_KEY_BYTES} UTF-8 bytes (got ${bytes.length})`;
  return undefined;
}

/**
 * `{ flowKey: key }` when `key` can be a flow key, else `{}`: for writers whose key predates
 * flow keys (an outbox ordering key, a saga instance id), which publish without one rather
 * than refuse the event.
 */
export function flowKeyIfUsable(key: string | null | undefined): { readonly flowKey?: string } {
  return typeof key === 'string' && flowKeyProblem(key) === undefined ? { flowKey: key } : {};
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
  const flowKey = event.flowKey === undefined ? undefined : flowKeyProblem(event.flowKey);
  if (flowKey !== undefined) throw new PublishError('PUBLISH_EVENT_INVALID', `flow_key of ${event.eventId} ${flowKey}`, { field: Fields.flowKey });
}

export async function prepareEntry(route: PublishRoute, event: PublishEvent, hmac?: HmacEngine): Promise<PreparedEntry> {
  const payload = bytesOf(event.payload);
  const fields: RedisArg[] = [Fields.event, event.eventType, Fields.eventId, event.eventId, Fields.payload, payload];
  if (event.traceparent !== undefined) fields.push(Fields.traceparent, event.traceparent);
  // After the signed fields, before key_id/sig: the digest of publish dedupe covers the first
  // three pairs only, and a consumer that ignores the field reads the entry as before.
  if (event.flowKey !== undefined) fields.push(Fields.flowKey, event.flowKey);
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
