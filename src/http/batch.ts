/**
 * The JSON batch of `POST /v1/events` (SPEC §6.2; an event may carry a due time, §5.6), checked in full before anything is sent:
 * a batch is all-or-nothing at validation. When any event is unusable (unknown type, type
 * the producer may not publish, bad event_id, traceparent or payload) the whole batch is
 * refused with the status of the first such event, and `invalid_events` lists every one by
 * index — so nothing is half-written and the client can fix all of them at once.
 */
import * as z from 'zod/mini';
import { isPaddedBase64 } from '../ground/base64';
import { decodeUtf8Strict } from '../ground/text';
import { isValidEventId } from '../entry/keys';
import { checkEvent, flowKeyProblem, type PublishEvent } from '../publish/entry-fields';
import { isValidTraceparent } from '../telemetry/traceparent';
import type { Transport } from '../redis/port';
import type { ProblemCode } from '../web/problems';
import type { ScheduleOptions } from '../schedule/due-time';
import { checkScheduleInput, SCHEDULE_MEMBERS } from './schedule-input';

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
  /**
   * Due times (SPEC §5.6): the batch's Deliver-At / Delay headers, already checked, for every
   * event without a `deliver_at` or `delay` of its own (an event with its own beside a header
   * is refused: one due time per event), and the bound an event's own is checked against.
   */
  readonly schedule: { readonly headers: ScheduleOptions | undefined; readonly maxDelayMs: number; readonly now: number };
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
    flow_key: z.optional(z.string()),
    deliver_at: z.optional(z.string()),
    delay: z.optional(z.string()),
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
    return { index, code: 'invalid_request', detail: `event ${index}: expected {event_type, event_id, payload, traceparent?, flow_key?, deliver_at? | delay?}; check ${fields}` };
  }
  const { event_type: eventType, event_id: eventId, payload, traceparent, flow_key: flowKey, deliver_at: deliverAt, delay } = parsed.data;
  if (!Object.hasOwn(rules.routes, eventType)) return { index, code: 'event_type_unknown', detail: `event ${index}: unknown event type` };
  if (!rules.allowed.has(eventType)) return { index, code: 'event_type_forbidden', detail: `event ${index}: this producer may not publish ${eventType}` };
  if (!isValidEventId(eventId)) return { index, code: 'event_id_invalid', detail: `event ${index}: event_id must be 1..=256 printable ASCII characters without spaces` };
  if (traceparent !== undefined && !isValidTraceparent(traceparent)) return { index, code: 'traceparent_invalid', detail: `event ${index}: malformed traceparent` };
  const flowKeyRefusal = flowKey === undefined ? undefined : flowKeyProblem(flowKey);
  if (flowKeyRefusal !== undefined) return { index, code: 'flow_key_invalid', detail: `event ${index}: flow_key ${flowKeyRefusal}` };
  const bytes = decodePayload(payload);
  if (bytes === undefined) return { index, code: 'payload_invalid', detail: `event ${index}: {"base64": ...} must hold a valid base64 string` };
  const due = dueTimeOf(deliverAt, delay, rules);
  if ('code' in due) return { index, ...due, detail: `event ${index}: ${due.detail}` };
  const event: PublishEvent = {
    eventType,
    eventId,
    payload: bytes,
    ...(traceparent === undefined ? {} : { traceparent }),
    ...(flowKey === undefined ? {} : { flowKey }),
    ...due.schedule,
  };
  try {
    checkEvent(event, rules.transport);
  } catch (error) {
    return { index, code: 'event_invalid', detail: `event ${index}: ${error instanceof Error ? error.message : 'refused'}` };
  }
  return event;
}

/** An event's own due time, or the batch headers', or a problem (both, or a bad value). */
function dueTimeOf(deliverAt: string | undefined, delay: string | undefined, rules: BatchRules): { schedule: ScheduleOptions } | { code: ProblemCode; detail: string } {
  const headers = rules.schedule.headers;
  if (deliverAt === undefined && delay === undefined) return { schedule: headers ?? {} };
  if (headers !== undefined) return { code: 'schedule_conflict', detail: 'a due time of its own (deliver_at or delay) beside the batch\'s Deliver-At or Delay header' };
  const check = checkScheduleInput({ deliverAt, delay }, SCHEDULE_MEMBERS, rules.schedule.maxDelayMs, rules.schedule.now);
  if (!check.ok) return { code: check.code, detail: check.detail };
  return { schedule: check.schedule ?? {} };
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

