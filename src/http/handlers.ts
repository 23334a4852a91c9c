/**
 * The two publish endpoints (SPEC §6.2). Checks run cheapest first and before the body is
 * read: token (401), event type known (404) and allowed (403), headers (400; Deliver-At and
 * Delay schedule the event, SPEC §5.6), then the bounded body (413). Thrown errors go to the
 * app's error handler (failures.ts).
 */
import type { Context } from 'hono';
import type { DeploymentRuntime } from '../deployment/runtime';
import { isValidEventId } from '../entry/keys';
import { flowKeyProblem } from '../publish/entry-fields';
import type { PublishResult } from '../publish/publisher';
import { isValidTraceparent } from '../telemetry/traceparent';
import { checkBatch } from './batch';
import { readBoundedBody } from '../web/body';
import { problemResponse } from '../web/problems';
import type { TokenAuthenticator } from './tokens';
import { checkScheduleInput, SCHEDULE_HEADERS, type ScheduleInputCheck } from './schedule-input';
import { formatRfc3339 } from '../schedule/due-time';

export interface HandlerDeps {
  readonly runtime: DeploymentRuntime;
  readonly tokens: TokenAuthenticator;
  readonly bodyLimitBytes: number;
  readonly maxBatch: number;
  /** Runs after a successful publish with its results (the streams it touched, and when scheduled ones are due); never throws. */
  readonly afterPublish: (results: readonly PublishResult[]) => Promise<void>;
  /** The server's clock: only to refuse a Deliver-At beyond the bound before sending. */
  readonly now: () => number;
}

/** The Deliver-At / Delay headers of a request (SPEC §5.6). */
function scheduleHeaders(c: Context, maxDelayMs: number, now: number): ScheduleInputCheck {
  return checkScheduleInput({ deliverAt: c.req.header('deliver-at'), delay: c.req.header('delay') }, SCHEDULE_HEADERS, maxDelayMs, now);
}

function scheduleProblem(check: Extract<ScheduleInputCheck, { ok: false }>): Response {
  return problemResponse(check.code, check.detail, { header: check.field });
}

function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}

function tooLarge(limit: number): Response {
  return problemResponse('body_too_large', `the body limit is ${limit} bytes`);
}

/**
 * A header value reaches the handler as Latin-1 code units, whatever bytes the client sent: a
 * UTF-8 key would arrive as other text. The header takes printable ASCII; any other key goes
 * in a batch body's `flow_key`, where JSON carries it exactly.
 */
function flowKeyHeaderProblem(value: string): string | undefined {
  if (!/^[\x20-\x7e]*$/.test(value)) return 'must be printable ASCII: send other keys as flow_key in a JSON batch';
  return flowKeyProblem(value);
}

export function createHandlers(deps: HandlerDeps) {
  const { runtime, tokens } = deps;
  const routes = runtime.config.data.routes;

  async function publishOne(c: Context): Promise<Response> {
    const auth = await tokens.authenticate(c.req.header('authorization'));
    if (!auth.ok) return problemResponse(auth.code);
    const eventType = c.req.param('eventType') ?? '';
    if (!Object.hasOwn(routes, eventType)) return problemResponse('event_type_unknown', 'no route for this event type');
    if (!auth.eventTypes.has(eventType)) return problemResponse('event_type_forbidden', 'this token may not publish this event type');
    const eventId = c.req.header('idempotency-key');
    if (eventId === undefined) return problemResponse('idempotency_key_missing', 'send the event_id as Idempotency-Key');
    if (!isValidEventId(eventId)) return problemResponse('idempotency_key_invalid', 'must be 1..=256 printable ASCII characters without spaces');
    const traceparent = c.req.header('traceparent');
    if (traceparent !== undefined && !isValidTraceparent(traceparent)) return problemResponse('traceparent_invalid');
    const flowKey = c.req.header('flow-key');
    const flowKeyRefusal = flowKey === undefined ? undefined : flowKeyHeaderProblem(flowKey);
    if (flowKeyRefusal !== undefined) return problemResponse('flow_key_invalid', `Flow-Key ${flowKeyRefusal}`);
    const publisher = runtime.publisherFor(auth.producer);
    const schedule = scheduleHeaders(c, publisher.config.maxDelayMs, deps.now());
    if (!schedule.ok) return scheduleProblem(schedule);
    const body = await readBoundedBody(c.req.raw, deps.bodyLimitBytes);
    if (!body.ok) return tooLarge(deps.bodyLimitBytes);

    const event = { eventType, eventId, payload: body.bytes, ...(traceparent === undefined ? {} : { traceparent }), ...(flowKey === undefined ? {} : { flowKey }) };
    const result = await publisher.publish(event, schedule.schedule);
    await deps.afterPublish([result]);
    const answer = { event_id: result.eventId, stream: result.stream, entry_id: result.entryId, ...scheduledBody(result) };
    return result.duplicate ? c.json({ ...answer, duplicate: true }, 200) : c.json(answer, 202);
  }

  async function publishBatch(c: Context): Promise<Response> {
    const auth = await tokens.authenticate(c.req.header('authorization'));
    if (!auth.ok) return problemResponse(auth.code);
    if (!isJson(c.req.header('content-type'))) return problemResponse('content_type_unsupported', 'a batch must be application/json');
    const body = await readBoundedBody(c.req.raw, deps.bodyLimitBytes);
    if (!body.ok) return tooLarge(deps.bodyLimitBytes);
    const publisher = runtime.publisherFor(auth.producer);
    const now = deps.now();
    const schedule = scheduleHeaders(c, publisher.config.maxDelayMs, now);
    if (!schedule.ok) return scheduleProblem(schedule);
    const batch = checkBatch(body.bytes, {
      maxBatch: deps.maxBatch,
      routes,
      allowed: auth.eventTypes,
      transport: runtime.port.transport,
      schedule: { headers: schedule.schedule, maxDelayMs: publisher.config.maxDelayMs, now },
    });
    if (!batch.ok) return problemResponse(batch.code, batch.detail, batch.invalid ? { invalid_events: batch.invalid } : {});

    const results = await publisher.publishBatch(batch.events);
    await deps.afterPublish(results);
    const allDuplicates = results.every((r) => r.duplicate);
    return c.json({ results: results.map(resultBody) }, allDuplicates ? 200 : 202);
  }

  return { publishOne, publishBatch };
}

function resultBody(result: PublishResult) {
  return { event_id: result.eventId, event_type: result.eventType, stream: result.stream, entry_id: result.entryId, duplicate: result.duplicate, ...scheduledBody(result) };
}

/**
 * A scheduled event (or a duplicate of one) has no entry yet: `entry_id` null, `scheduled`
 * true, `deliver_at` its due time (RFC 3339, UTC), and `cancelled` when the original was.
 */
function scheduledBody(result: PublishResult) {
  const scheduled = result.scheduled;
  if (scheduled === undefined) return {};
  return { entry_id: null, scheduled: true, deliver_at: formatRfc3339(scheduled.deliverAtMs), ...(scheduled.cancelled ? { cancelled: true } : {}) };
}
