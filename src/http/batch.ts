/**
 * The JSON batch of `POST /v1/events` (SPEC §6.2), checked in full before anything is sent:
 * a batch is all-or-nothing at validation. When any event is unusable (unknown type, type
 * the producer may not publish, bad event_id, traceparent or payload) the whole batch is
 * refused with the status of the first such event, and `invalid_events` lists every one by
 * index — so nothing is half-written and the client can fix all of them at once.
 */
import * as z from 'zod/mini';
import { isPaddedBase64 } from '../ground/base64';
import { decodeUtf8Strict } from '../ground/text';
import { isValidEventId } from '../entry/keys';
import { checkEvent, type PublishEvent } from '../publish/entry-fields';
import { isValidTraceparent } from '../telemetry/traceparent';
import type { Transport } from '../redis/port';
import type { ProblemCode } from '../web/problems';

export interface InvalidEvent {
  readonly index: number;
  readonly code: ProblemCode;
  readonly detail: string;
}

export interface BatchRules {
  readonly maxBatch: number;
  /** event_type → stream of the deployment. */
  readonly routes: Readonly<Record<string, string>>;
  /** Event types the authenticated producer may publish. */
  readonly allowed: ReadonlySet<string>;
  readonly transport: Transport;
}

export type BatchCheck =
  | { readonly ok: true; readonly events: PublishEvent[] }
  | { readonly ok: false; readonly code: ProblemCode; readonly detail: string; readonly invalid?: readonly InvalidEvent[] };

/** Built on the first batch, not when the module is imported. */
const eventSchema = z.lazy(() =>
  z.strictObject({
    event_type: z.string(),
    event_id: z.string(),
    payload: z.unknown().check(z.refine((value) => value !== undefined, 'is required')),
    traceparent: z.optional(z.string()),
  }),
);
const batchSchema = z.lazy(() => z.strictObject({ events: z.array(z.unknown()) }));

/** `{"base64": "..."}` (that exact shape) is raw bytes; any other JSON value is sent as its JSON text. */
function decodePayload(value: unknown): Uint8Array | string | undefined {
  const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject || Object.keys(value).length !== 1 || !Object.hasOwn(value, 'base64')) return JSON.stringify(value);
  const text = (value as { base64: unknown }).base64;
  if (typeof text !== 'string' || !isPaddedBase64(text)) return undefined;
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function checkOne(raw: unknown, index: number, rules: BatchRules): PublishEvent | InvalidEvent {
  const parsed = eventSchema.safeParse(raw);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((i) => i.path.join('.') || '(event)'))].join(', ');
    return { index, code: 'invalid_request', detail: `event ${index}: expected {event_type, event_id, payload, traceparent?}; check ${fields}` };
  }
  const { event_type: eventType, event_id: eventId, payload, traceparent } = parsed.data;
  if (!Object.hasOwn(rules.routes, eventType)) return { index, code: 'event_type_unknown', detail: `event ${index}: unknown event type` };
  if (!rules.allowed.has(eventType)) return { index, code: 'event_type_forbidden', detail: `event ${index}: this producer may not publish ${eventType}` };
  if (!isValidEventId(eventId)) return { index, code: 'event_id_invalid', detail: `event ${index}: event_id must be 1..=256 printable ASCII characters without spaces` };
  if (traceparent !== undefined && !isValidTraceparent(traceparent)) return { index, code: 'traceparent_invalid', detail: `event ${index}: malformed traceparent` };
  const bytes = decodePayload(payload);
  if (bytes === undefined) return { index, code: 'payload_invalid', detail: `event ${index}: {"base64": ...} must hold a valid base64 string` };
  const event: PublishEvent = traceparent === undefined ? { eventType, eventId, payload: bytes } : { eventType, eventId, payload: bytes, traceparent };
  try {
    checkEvent(event, rules.transport);
  } catch (error) {
    return { index, code: 'event_invalid', detail: `event ${index}: ${error instanceof Error ? error.message : 'refused'}` };
  }
  return event;
}

export function checkBatch(bytes: Uint8Array, rules: BatchRules): BatchCheck {
  let json: unknown;
  try {
    json = JSON.parse(decodeUtf8Strict(bytes));
  } catch {
    return { ok: false, code: 'invalid_request', detail: 'body is not UTF-8 JSON' };
  }
  const parsed = batchSchema.safeParse(json);
  if (!parsed.success) return { ok: false, code: 'invalid_request', detail: 'body must be {"events": [...]} and nothing else' };
  const { events } = parsed.data;
  if (events.length === 0) return { ok: false, code: 'invalid_request', detail: 'events must hold at least one event' };
  if (events.length > rules.maxBatch) return { ok: false, code: 'batch_too_large', detail: `a batch holds at most ${rules.maxBatch} events` };
  const checked = events.map((raw, index) => checkOne(raw, index, rules));
  const invalid = checked.filter((c): c is InvalidEvent => 'code' in c);
  if (invalid.length === 0) return { ok: true, events: checked as PublishEvent[] };
  const first = invalid[0]!;
  const detail = invalid.length === 1 ? first.detail : `${first.detail} (and ${invalid.length - 1} more invalid events)`;
  return { ok: false, code: first.code, detail, invalid };
}

