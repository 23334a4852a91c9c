/**
 * The saga entry pipeline, shared by command and result consumers. Order matters, and is
 * the SPEC §4 table read top-down: the entry's identity fields, then its origin (nothing
 * from an unauthenticated writer is even parsed), then the envelope bytes, then the
 * envelope's claimed identity, then the consumer's own gate, and only then the handler.
 */
import { DeadLetterReasons } from '../auth/reasons';
import type { HmacEngine } from '../auth/hmac';
import type { StreamAuth, StreamAuthInput } from '../auth/modes';
import { createAdmission, isVerdict, refused, type Admission } from '../admission/signed-processor';
import { isPromiseLike } from '../ground/maybe-promise';
import type { DeliveryContext, EntryProcessor } from '../decide';
import { Fields, fieldText, type StreamEntry } from '../entry';
import type { PayloadDecoder } from '../processor';
import { parseTraceparent } from '../telemetry/traceparent';
import { traceHandling, tracingActive } from '../telemetry/tracing';
import { Verdicts, verdictOfHandler, type Verdict } from '../verdict';
import type { SagaDelivery, SagaHandler } from './delivery';

export interface EnvelopeProcessorSpec<E> {
  readonly stream: string;
  readonly auth: StreamAuth | StreamAuthInput;
  readonly decode: PayloadDecoder<E>;
  /** The id the envelope claims for itself (command_id / result_id). */
  readonly idOf: (envelope: E) => string;
  /** The consumer's own check (route, allowed producers); a verdict stops the entry. */
  readonly gate: (envelope: E, producer: string) => Verdict | undefined;
  readonly handler: SagaHandler<E>;
  readonly hmac?: HmacEngine;
}

export function createEnvelopeProcessor<E>(spec: EnvelopeProcessorSpec<E>): EntryProcessor {
  const admit = createAdmission(spec.stream, spec.auth, spec.decode, spec.hmac);
  const proceed = (entry: StreamEntry, context: DeliveryContext, admitted: Admission<E>): Verdict | Promise<Verdict> => {
    if (isVerdict(admitted)) return refused(context, entry, admitted);
    const { payload: envelope, producer } = admitted;
    const eventId = fieldText(entry, Fields.eventId)!;
    if (spec.idOf(envelope) !== eventId) return refused(context, entry, Verdicts.deadLetter(DeadLetterReasons.envelopeIdMismatch));
    const gated = spec.gate(envelope, producer);
    if (gated) return refused(context, entry, gated);
    const delivery: SagaDelivery<E> = {
      envelope,
      producer,
      trace: parseTraceparent(fieldText(entry, Fields.traceparent)),
      deliveries: entry.deliveries,
      eventId,
      entry,
      // A getter: the round creates the AbortSignal only for handlers that read it.
      get signal() {
        return context.signal;
      },
      deadline: context.deadline,
    };
    if (!tracingActive()) return verdictOfHandler(spec.handler, delivery);
    // Admitted: the origin vouches for the traceparent, so it may parent the entry's span.
    return traceHandling(context.scope, entry, true, () => verdictOfHandler(spec.handler, delivery));
  };
  // Not async: with a synchronous origin check and handler the verdict is a plain value; a
  // throw (idOf, gate, handler) is classified by the round as a rejection was before.
  return (entry: StreamEntry, context: DeliveryContext): Verdict | Promise<Verdict> => {
    const admission = admit(entry);
    if (isPromiseLike(admission)) return Promise.resolve(admission).then((admitted) => proceed(entry, context, admitted));
    return proceed(entry, context, admission);
  };
}
