/**
 * An entry processor for signed (or exclusive) streams outside the saga contract: the
 * core's identity checks, then the origin, then the payload decoder, then the handler,
 * which also learns the authenticated producer.
 */
import type { DeliveryContext, EntryProcessor } from '../decide';
import { Fields, type StreamEntry } from '../entry';
import { checkRequiredFields, DeliveryView, type Delivery, type PayloadDecoder } from '../processor';
import { verdictOfOutcome, verdictOfThrown, type HandlerOutcome, type Verdict } from '../verdict';
import type { StreamAuth, StreamAuthInput } from './modes';
import { createOriginVerifier } from './verifier';

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
}

/** Runs a decoder; a Rejection it throws becomes that dead-letter, anything else is retained. */
export function decodeOrVerdict<P>(decode: PayloadDecoder<P>, bytes: Uint8Array): { payload: P } | Verdict {
  try {
    return { payload: decode(bytes) };
  } catch (error) {
    return verdictOfThrown(error);
  }
}

export function createSignedProcessor<P>(options: SignedProcessorOptions<P>): EntryProcessor {
  const verify = createOriginVerifier(options.stream, options.auth);
  return async (entry: StreamEntry, context: DeliveryContext): Promise<Verdict> => {
    // Origin first: an entry nobody can vouch for is an auth rejection, whatever else is
    // wrong with it (a missing field is covered by the signature as an empty one).
    const origin = await verify(entry);
    if (origin.kind !== 'authentic') return origin;
    const incomplete = checkRequiredFields(entry);
    if (incomplete) return incomplete;
    const decoded = decodeOrVerdict(options.decode, entry.fields.get(Fields.payload)!);
    if ('kind' in decoded) return decoded;
    const delivery = new SignedDeliveryView(entry, decoded.payload, context, origin.producer);
    return verdictOfOutcome(await options.handler(delivery));
  };
}
