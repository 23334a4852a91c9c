/**
 * Publish failures, branched on by `code`. Only PUBLISH_APPEND_FAILED is transient: the
 * outbox should retry it, and since the append may have happened anyway, it bumps the
 * duplicate hints. The others are the caller's bug and nothing was written.
 */
import { SagaStreamsError } from '../ground/errors';

export type PublishErrorCode =
  /** No route for the event type; nothing was written. */
  | 'PUBLISH_ROUTE_UNKNOWN'
  /** The event itself is unusable (event_id, payload or traceparent); nothing was written. */
  | 'PUBLISH_EVENT_INVALID'
  /** Redis did not confirm the append (unreachable, timed out, refused). Retry. */
  | 'PUBLISH_APPEND_FAILED'
  /** The event_id was published with a different body within the dedupe window; nothing was written. */
  | 'PUBLISH_KEY_REUSED'
  /** The due time of a scheduled publish is unusable (both options, not a number, past the bound); nothing was written. */
  | 'PUBLISH_SCHEDULE_INVALID'
  /** The event's stream cannot hold scheduled events here (Redis Cluster without a hash tag); nothing was written. */
  | 'PUBLISH_SCHEDULE_UNSUPPORTED';

export class PublishError extends SagaStreamsError<PublishErrorCode> {
  /** True when retrying the same events can succeed. */
  readonly transient: boolean;
  /** The event's wire field at fault (`event_id`, `payload`, `traceparent`), or the schedule option (`deliverAt`, `delayMs`), when one is. */
  readonly field: string | undefined;

  constructor(code: PublishErrorCode, message: string, options?: { cause?: unknown; field?: string }) {
    super(code, message, options);
    this.transient = code === 'PUBLISH_APPEND_FAILED';
    this.field = options?.field;
  }
}
