/**
 * The saga entry pipeline, shared by command and result consumers. Order matters, and is
 * the SPEC §4 table read top-down: the entry's identity fields, then its origin (nothing
 * from an unauthenticated writer is even parsed), then the envelope bytes, then the
 * envelope's claimed identity, then the consumer's own gate, and only then the handler.
 */
import { DeadLetterReasons } from '../auth/reasons';
import type { HmacEngine } from '../auth/hmac';
import type { StreamAuth, StreamAuthInput } from '../auth/modes';
import { admittingProcessor, createAdmission, handleAdmitted, isVerdict, refused, type Admission } from '../admission/signed-processor';
import type { DeliveryContext, EntryProcessor } from '../consume/decide';
import { Fields, fieldText, flowKeyOf, type StreamEntry } from '../entry/entry';
import type { PayloadDecoder } from '../consume/processor';
import { parseTraceparent } from '../telemetry/traceparent';
import { Verdicts, type Verdict } from '../verdict/verdict';
import type { SagaDelivery, SagaHandler } from './delivery';

export interface EnvelopeProcessorSpec<E> {
  readonly stream: string;
  readonly auth: StreamAuth | StreamAuthInput;
  readonly decode: PayloadDecoder<E>;
  /** The id the envelope claims for itself (command_id / result_id). */
  readonly idOf: (envelope: E) => string;
  /**
   * The saga instance the envelope belongs to, when the consumer holds entries to flow leases
   * (SPEC §5.7): an entry's flow key must then be its bytes. Without flow nothing reads the key.
   */
  readonly instanceOf?: (envelope: E) => string;
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
    if (spec.instanceOf !== undefined && !flowKeyMatches(entry, spec.instanceOf(envelope))) return refused(context, entry, Verdicts.deadLetter(DeadLetterReasons.flowKeyMismatch));
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
    return handleAdmitted(context, entry, spec.handler, delivery);
  };
  // A throw (idOf, gate, handler) is classified by the round, as a rejection was before.
  return admittingProcessor(admit, proceed);
}

/**
 * The entry's flow key (unsigned: written beside the signature, SPEC §5.7) is absent, or is
 * exactly the bytes of the signed instance id. Bytes, not decoded text (SPEC §3.4): a key
 * that only decodes to the same text is another key to the lease.
 */
function flowKeyMatches(entry: StreamEntry, instanceId: string): boolean {
  const key = flowKeyOf(entry);
  if (key === undefined) return true;
  const expected = UTF8.encode(instanceId);
  return key.length === expected.length && key.every((byte, i) => byte === expected[i]);
}

const UTF8 = new TextEncoder();
