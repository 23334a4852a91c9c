/**
 * An entry processor for signed (or exclusive) streams outside the saga contract: the
 * core's identity checks, then the origin, then the payload decoder, then the handler,
 * which also learns the authenticated producer.
 */
import type { DeliveryContext, EntryProcessor } from '../consume/decide';
import { Fields, type StreamEntry } from '../entry/entry';
import { checkFieldNames, checkRequiredFields, DeliveryView, type Delivery, type PayloadDecoder } from '../consume/processor';
import { isPromiseLike, type MaybePromise } from '../ground/maybe-promise';
import { verdictOfHandler, verdictOfThrown, type HandlerOutcome, type Verdict } from '../verdict/verdict';
import { traceHandling, traceRefused, tracingActive } from '../telemetry/tracing';
import type { HmacEngine } from '../auth/hmac';
import type { StreamAuth, StreamAuthInput } from '../auth/modes';
import { createOriginVerifier, type OriginCheck } from './verifier';

export interface SignedDelivery<P> extends Delivery<P> {
  readonly producer: string;
}

class SignedDeliveryView<P> extends DeliveryView<P> implements SignedDelivery<P> {
  constructor(entry: StreamEntry, payload: P, context: DeliveryContext, readonly producer: string) {
    super(entry, payload, context);
  }
}

export type SignedDeliveryHandler<P> = (delivery: SignedDelivery<P>) => Promise<HandlerOutcome> | HandlerOutcome;

export interface SignedProcessorOptions<P> {
  /** The stream this processor's consumer reads; the signature binds it. */
  readonly stream: string;
  readonly auth: StreamAuth | StreamAuthInput;
  readonly decode: PayloadDecoder<P>;
  readonly handler: SignedDeliveryHandler<P>;
  /** Checks signatures; Web Crypto by default. On Node pass `nodeHmac` (saga-streams/node). */
  readonly hmac?: HmacEngine;
}

/** Runs a decoder; a Rejection it throws becomes that dead-letter, anything else is retained. */
export function decodeOrVerdict<P>(decode: PayloadDecoder<P>, bytes: Uint8Array): { payload: P } | Verdict {
  try {
    return { payload: decode(bytes) };
  } catch (error) {
    return verdictOfThrown(error);
  }
}

export interface Admitted<P> {
  readonly producer: string;
  readonly payload: P;
}

export type Admission<P> = Admitted<P> | Verdict;

/**
 * The checks every signed consumer runs before its own: the field names (malformed names
 * leave no value to trust, not even the origin check's), then the origin (an entry nobody
 * can vouch for is an auth rejection, whatever else is wrong with it — a missing field is
 * covered by the signature as an empty one), then the required fields, then the decoder.
 * Synchronous when the origin check is (native HMAC): nothing is awaited per entry.
 */
export function createAdmission<P>(stream: string, auth: StreamAuth | StreamAuthInput, decode: PayloadDecoder<P>, hmac?: HmacEngine) {
  const verify = createOriginVerifier(stream, auth, hmac);
  const admitAuthentic = (entry: StreamEntry, origin: OriginCheck): Admission<P> => {
    if (origin.kind === 'dead-letter') return origin;
    // Anything but an explicit 'authentic' fails closed (thrown: retained, never handled).
    if (origin.kind !== 'authentic') throw new TypeError('origin check gave no verdict');
    const incomplete = checkRequiredFields(entry);
    if (incomplete) return incomplete;
    const decoded = decodeOrVerdict(decode, entry.fields.get(Fields.payload)!);
    if ('kind' in decoded) return decoded;
    return { producer: origin.producer, payload: decoded.payload };
  };
  return (entry: StreamEntry): MaybePromise<Admission<P>> => {
    const malformed = checkFieldNames(entry);
    if (malformed) return malformed;
    const origin = verify(entry);
    return isPromiseLike(origin) ? Promise.resolve(origin).then((o) => admitAuthentic(entry, o)) : admitAuthentic(entry, origin);
  };
}

export function isVerdict(value: object): value is Verdict {
  return 'kind' in value;
}

/** A verdict reached before any handler ran, recorded on the entry's trace span. */
export function refused(context: DeliveryContext, entry: StreamEntry, verdict: Verdict): Verdict {
  traceRefused(context.scope, entry, verdict);
  return verdict;
}

/**
 * The verdict of an admitted entry's handler, on the entry's trace span when a tracer is
 * registered (the origin vouches for the traceparent, so it may parent the span); without
 * one, no closure per entry.
 */
export function handleAdmitted<D>(context: DeliveryContext, entry: StreamEntry, handler: (delivery: D) => unknown, delivery: D): Verdict | Promise<Verdict> {
  if (!tracingActive()) return verdictOfHandler(handler, delivery);
  return traceHandling(context.scope, entry, true, () => verdictOfHandler(handler, delivery));
}

/**
 * An entry processor that admits each entry, then `proceed`s with the admission. With a
 * synchronous origin check (native HMAC) and handler, the verdict comes back as a plain
 * value: no promise per entry (bench/entry-work.ts). A throw, synchronous or not, is
 * classified by the round (verdictOfThrown), as a rejection was before.
 */
export function admittingProcessor<P>(
  admit: (entry: StreamEntry) => MaybePromise<Admission<P>>,
  proceed: (entry: StreamEntry, context: DeliveryContext, admitted: Admission<P>) => Verdict | Promise<Verdict>,
): EntryProcessor {
  return (entry, context) => {
    const admission = admit(entry);
    if (isPromiseLike(admission)) return Promise.resolve(admission).then((admitted) => proceed(entry, context, admitted));
    return proceed(entry, context, admission);
  };
}

export function createSignedProcessor<P>(options: SignedProcessorOptions<P>): EntryProcessor {
  const admit = createAdmission(options.stream, options.auth, options.decode, options.hmac);
  return admittingProcessor(admit, (entry, context, admitted) => {
    if (isVerdict(admitted)) return refused(context, entry, admitted);
    const delivery = new SignedDeliveryView(entry, admitted.payload, context, admitted.producer);
    return handleAdmitted(context, entry, options.handler, delivery);
  });
}
