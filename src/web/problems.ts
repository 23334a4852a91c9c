/**
 * Every error the publish API answers, in one place (SPEC §6.2): RFC 9457
 * `application/problem+json` bodies with a stable `code` and `type`, so clients branch on
 * the code, never on the human-readable `detail`. Adding a code is an API change; renaming
 * one is a breaking change.
 */

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/** Prefix of every problem `type`: a URN, since nothing needs to resolve it. */
export const PROBLEM_TYPE_PREFIX = 'urn:saga-streams:problem:';
/** What a 503 asks clients to wait before retrying (seconds). */
export const RETRY_AFTER_SECONDS = 5;

export const Problems = {
  /** Body or parameters unusable: not JSON, wrong shape, empty batch. */
  invalid_request: { status: 400, title: 'Invalid request' },
  idempotency_key_missing: { status: 400, title: 'Idempotency-Key header is required' },
  /** The Idempotency-Key (the event_id) is not 1..=256 printable ASCII without spaces. */
  idempotency_key_invalid: { status: 400, title: 'Idempotency-Key is not a valid event id' },
  /** A batch event's event_id is not 1..=256 printable ASCII without spaces. */
  event_id_invalid: { status: 400, title: 'event_id is not a valid event id' },
  traceparent_invalid: { status: 400, title: 'traceparent is not a valid W3C traceparent' },
  /** `Flow-Key` (or a batch event's `flow_key`) is empty, too long, or not text a key can be. */
  flow_key_invalid: { status: 400, title: 'Flow key is not usable' },
  /** A batch event's payload is neither a JSON value nor `{"base64": "<valid base64>"}`. */
  payload_invalid: { status: 400, title: 'Payload is not decodable' },
  /** The publisher refused the event (e.g. non-UTF-8 bytes over REST, a batch spanning Cluster slots). */
  event_invalid: { status: 400, title: 'Event refused' },
  // The convention payment APIs use: same key, different request → 422, never a silent duplicate.
  idempotency_key_reused: { status: 422, title: 'Idempotency-Key was already used for a different event body' },
  batch_too_large: { status: 400, title: 'Batch holds too many events' },
  /** `Deliver-At` (or a batch event's `deliver_at`) is not an RFC 3339 date-time, or is too far ahead. */
  deliver_at_invalid: { status: 400, title: 'Deliver-At is not a usable due time' },
  /** `Delay` (or a batch event's `delay`) is not a duration like `30s`, or is too long. */
  delay_invalid: { status: 400, title: 'Delay is not a usable duration' },
  /** Both `Deliver-At` and `Delay` (or a batch event's own due time beside the batch's headers). */
  schedule_conflict: { status: 400, title: 'Deliver-At and Delay cannot both be given' },
  /** The event type's stream cannot hold scheduled events on this deployment (Redis Cluster without a hash tag). */
  schedule_unsupported: { status: 400, title: 'Scheduled delivery is not available for this event type' },
  token_missing: { status: 401, title: 'Bearer token required' },
  token_invalid: { status: 401, title: 'Bearer token not recognised' },
  event_type_forbidden: { status: 403, title: 'Producer may not publish this event type' },
  /** A state-changing dashboard request that did not come from the dashboard's own pages (CSRF). */
  cross_site_forbidden: { status: 403, title: 'Cross-site request refused' },
  event_type_unknown: { status: 404, title: 'Unknown event type' },
  route_not_found: { status: 404, title: 'No such endpoint' },
  body_too_large: { status: 413, title: 'Request body too large' },
  content_type_unsupported: { status: 415, title: 'Unsupported content type' },
  /** Too many admin-token attempts (dashboard login or bearer): wait `Retry-After` seconds. */
  too_many_attempts: { status: 429, title: 'Too many attempts' },
  server_misconfigured: { status: 500, title: 'Server misconfigured' },
  internal_error: { status: 500, title: 'Internal error' },
  /** Redis did not confirm the append (or is unreachable): retry after `Retry-After`. */
  redis_unavailable: { status: 503, title: 'Redis unavailable' },
  not_ready: { status: 503, title: 'Not ready' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemCode = keyof typeof Problems;

export interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly code: ProblemCode;
  readonly detail?: string;
  /** Extension members, e.g. `invalid_events` of a rejected batch. */
  readonly [extension: string]: unknown;
}

export function problemBody(code: ProblemCode, detail?: string, extensions: Record<string, unknown> = {}): ProblemBody {
  const { status, title } = Problems[code];
  return { ...extensions, type: `${PROBLEM_TYPE_PREFIX}${code}`, title, status, code, ...(detail === undefined ? {} : { detail }) };
}

/** A complete response; 503s carry `Retry-After`, 401s a `WWW-Authenticate` challenge. */
export function problemResponse(code: ProblemCode, detail?: string, extensions?: Record<string, unknown>): Response {
  const body = problemBody(code, detail, extensions);
  const headers = new Headers({ 'content-type': PROBLEM_CONTENT_TYPE, 'cache-control': 'no-store' });
  if (body.status === 503) headers.set('retry-after', String(RETRY_AFTER_SECONDS));
  if (code === 'token_missing') headers.set('www-authenticate', 'Bearer');
  if (code === 'token_invalid') headers.set('www-authenticate', 'Bearer error="invalid_token"');
  return new Response(JSON.stringify(body), { status: body.status, headers });
}
