/**
 * Thrown errors → problem responses, in one place. Redis trouble (unreachable, or an
 * append it did not confirm) is a 503 the client retries; a publisher refusal is the
 * client's 400; missing secrets are the operator's 500. Anything else is logged and
 * answered with a bare 500 — no message or stack ever reaches the client.
 */
import { errorCode } from '../ground/errors';
import type { Logger } from '../web/log';
import { problemResponse } from '../web/problems';

const UNAVAILABLE = new Set(['REDIS_UNAVAILABLE', 'PUBLISH_APPEND_FAILED']);

export function responseForError(error: unknown, log: Logger): Response {
  const code = errorCode(error);
  if (code === 'PUBLISH_EVENT_INVALID' || code === 'REST_PAYLOAD_NOT_UTF8') {
    return problemResponse('event_invalid', error instanceof Error ? error.message : undefined);
  }
  if (code === 'PUBLISH_ROUTE_UNKNOWN') return problemResponse('event_type_unknown');
  if (code === 'PUBLISH_KEY_REUSED') return problemResponse('idempotency_key_reused', error instanceof Error ? error.message : undefined);
  if (code === 'PUBLISH_SCHEDULE_INVALID') {
    // The headers were checked on the server's clock; Redis's found the due time too far.
    const header = (error as { field?: string }).field === 'delayMs' ? 'Delay' : 'Deliver-At';
    return problemResponse(header === 'Delay' ? 'delay_invalid' : 'deliver_at_invalid', `${header}: ${(error as Error).message}`, { header });
  }
  if (code === 'PUBLISH_SCHEDULE_UNSUPPORTED') return problemResponse('schedule_unsupported', (error as Error).message);
  if (code !== undefined && UNAVAILABLE.has(code)) {
    log.error('redis unavailable', { error });
    return problemResponse('redis_unavailable', 'Redis did not confirm the request; retry it with the same Idempotency-Key');
  }
  if (code === 'CONFIG_INVALID') {
    log.error('publish API misconfigured', { error });
    return problemResponse('server_misconfigured', 'the server is missing configuration; see its logs');
  }
  log.error('publish API request failed', { error });
  return problemResponse('internal_error');
}
