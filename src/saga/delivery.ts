/**
 * What a saga handler receives: the decoded envelope, who authentically sent it, the trace
 * context it carried, and how many times the entry has been delivered.
 */
import type { StreamEntry } from '../entry/entry';
import type { TraceContext } from '../telemetry/traceparent';
import type { HandlerOutcome } from '../verdict/verdict';

export interface SagaDelivery<E> {
  readonly envelope: E;
  /** Keyring key → its producer; otherwise the producer the stream's auth names. */
  readonly producer: string;
  /** Parsed `traceparent`; undefined when absent or malformed (never blocks delivery). */
  readonly trace: TraceContext | undefined;
  /** Delivery count including this one (1 on first read). */
  readonly deliveries: number;
  readonly eventId: string;
  readonly entry: StreamEntry;
  /** Aborted when the handler's time is up. */
  readonly signal: AbortSignal;
  /** Epoch ms by which the handler must have finished. */
  readonly deadline: number;
}

/** Return nothing or 'committed' to ack, 'duplicate' when the inbox had it; throw Rejection / Deferral as in §4. */
export type SagaHandler<E> = (delivery: SagaDelivery<E>) => Promise<HandlerOutcome> | HandlerOutcome;
