/**
 * The generic entry processor: checks the fields every entry must carry, optionally
 * decodes the payload, and maps the handler's outcome to a verdict. Signed entries and
 * saga envelopes build on the same pieces.
 */
import { CoreReasons } from '../verdict/core-reasons';
import type { DeliveryContext, EntryProcessor } from './decide';
import { Fields, fieldText, hasMalformedFields, type StreamEntry } from '../entry/entry';
import { isValidEventIdBytes } from '../entry/keys';
import { decodeUtf8Strict, exactUtf8Text } from '../ground/text';
import { traceHandling, traceRefused, tracingActive } from '../telemetry/tracing';
import { Rejection, Verdicts, verdictOfHandler, type HandlerOutcome, type Verdict } from '../verdict/verdict';

export interface Delivery<P> {
  readonly entry: StreamEntry;
  readonly eventId: string;
  readonly eventType: string | undefined;
  readonly payload: P;
  readonly traceparent: string | undefined;
  /**
   * The entry's flow key (SPEC §5.7) exactly as published; undefined when it has none or its
   * bytes are not UTF-8. Unsigned: any writer of the stream can set it, so a handler that
   * trusts it for more than scheduling compares it with the signed payload first.
   */
  readonly flowKey?: string | undefined;
  readonly deliveries: number;
  readonly signal: AbortSignal;
  readonly deadline: number;
}

export type DeliveryHandler<P> = (delivery: Delivery<P>) => Promise<HandlerOutcome> | HandlerOutcome;

/** Turns payload bytes into P, throwing a Rejection for bytes that can never be handled. */
export type PayloadDecoder<P> = (bytes: Uint8Array) => P;

export const rawPayload: PayloadDecoder<Uint8Array> = (bytes) => bytes;

/** Text payloads: bytes that are not well-formed UTF-8 are dead-lettered, never turned into U+FFFD. */
export const textPayload: PayloadDecoder<string> = (bytes) => {
  try {
    return decodeUtf8Strict(bytes);
  } catch (error) {
    throw new Rejection(CoreReasons.payloadUndecodable, 'payload is not UTF-8', { cause: error });
  }
};

/** JSON payloads checked by a zod-like schema: undecodable (not UTF-8, not JSON) and invalid are dead-lettered. */
export function jsonPayload<P>(schema: { safeParse(value: unknown): { success: true; data: P } | { success: false } }): PayloadDecoder<P> {
  return (bytes) => {
    let value: unknown;
    try {
      value = JSON.parse(decodeUtf8Strict(bytes));
    } catch (error) {
      throw new Rejection(CoreReasons.payloadUndecodable, 'payload is not UTF-8 JSON', { cause: error });
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new Rejection(CoreReasons.payloadSchemaInvalid, 'payload fails its schema');
    return parsed.data;
  };
}

const MALFORMED: Verdict = Object.freeze(Verdicts.deadLetter(CoreReasons.entryMalformed));

/**
 * Field names no processor may read (SPEC §3.4, §4): a repeated name, or one that is not
 * UTF-8. The round refuses repeats before any processor runs; the built-in processors check
 * again, first, so they refuse both kinds whatever calls them.
 */
export function checkFieldNames(entry: StreamEntry): Verdict | undefined {
  return hasMalformedFields(entry) ? MALFORMED : undefined;
}

/**
 * The identity checks every entry passes before its payload is read: a usable event_id
 * (its exact bytes, SPEC §3.4) and a payload.
 */
export function checkRequiredFields(entry: StreamEntry): Verdict | undefined {
  const eventId = entry.fields.get(Fields.eventId);
  if (eventId === undefined) return Verdicts.deadLetter(CoreReasons.eventIdMissing);
  if (!isValidEventIdBytes(eventId)) return Verdicts.deadLetter(CoreReasons.eventIdInvalid);
  if (!entry.fields.has(Fields.payload)) return Verdicts.deadLetter(CoreReasons.payloadMissing);
  return undefined;
}

/**
 * What a handler receives, decoded only as far as it reads: most handlers never look at
 * the trace or the signal, and per-entry decoding and AbortSignals showed up in profiles.
 */
export class DeliveryView<P> implements Delivery<P> {
  constructor(
    readonly entry: StreamEntry,
    readonly payload: P,
    private readonly context: DeliveryContext,
  ) {}

  get eventId(): string {
    return fieldText(this.entry, Fields.eventId)!;
  }

  get eventType(): string | undefined {
    return fieldText(this.entry, Fields.event);
  }

  get traceparent(): string | undefined {
    return fieldText(this.entry, Fields.traceparent);
  }

  get flowKey(): string | undefined {
    const bytes = this.entry.fields.get(Fields.flowKey);
    return bytes === undefined ? undefined : exactUtf8Text(bytes);
  }

  get deliveries(): number {
    return this.entry.deliveries;
  }

  get signal(): AbortSignal {
    return this.context.signal;
  }

  get deadline(): number {
    return this.context.deadline;
  }
}

export function createProcessor<P>(decode: PayloadDecoder<P>, handler: DeliveryHandler<P>): EntryProcessor {
  // Not async: a synchronous handler's verdict comes back as a plain value (no promise per
  // entry). A throw — the decoder's Rejection included — is classified by the round.
  const handle = (entry: StreamEntry, context: DeliveryContext): Verdict | Promise<Verdict> =>
    verdictOfHandler(handler, new DeliveryView(entry, decode(entry.fields.get(Fields.payload)!), context));
  return (entry: StreamEntry, context: DeliveryContext): Verdict | Promise<Verdict> => {
    const rejected = checkFieldNames(entry) ?? checkRequiredFields(entry);
    if (rejected) {
      traceRefused(context.scope, entry, rejected);
      return rejected;
    }
    if (!tracingActive()) return handle(entry, context);
    // No origin check on this path: the entry's traceparent is linked, never a span parent.
    return traceHandling(context.scope, entry, false, () => handle(entry, context));
  };
}
