/**
 * Saga envelopes (SPEC §9): JSON on the wire, snake_case, checked with zod. Unknown fields
 * are dropped rather than refused, so a producer may add fields before every consumer
 * knows them; everything the contract names is required and checked.
 */
import * as z from 'zod/mini';
import { once } from '../ground/once';
import { IN_ENGLISH } from '../ground/zod-messages';

/** Built on first use: importing the envelopes (every saga deployment does) builds no schema. */
const parts = once(() => {
  const nonEmpty = z.string().check(z.minLength(1), z.maxLength(256));
  const definitionDigest = z.string().check(z.regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters'));
  const rfc3339 = z.iso.datetime({ offset: true });
  /** Where an envelope belongs: one workflow definition (version + digest) and one step. */
  const routeFields = {
    instance_id: nonEmpty,
    workflow: nonEmpty,
    definition_version: z.int().check(z.positive()),
    definition_digest: definitionDigest,
    step: nonEmpty,
    action: z.enum(['execute', 'compensate']),
  };
  const resultError = z.object({ code: nonEmpty, message: z.string().check(z.maxLength(4096)) });
  return { nonEmpty, definitionDigest, rfc3339, routeFields, resultError };
});

export const definitionDigestSchema = z.lazy(() => parts().definitionDigest);
export type SagaAction = 'execute' | 'compensate';

export const commandEnvelopeSchema = z.lazy(() => {
  const { nonEmpty, routeFields, rfc3339 } = parts();
  return z.object({
    /** Must equal the entry's event_id: the envelope cannot claim another identity. */
    command_id: nonEmpty,
    ...routeFields,
    issued_at: rfc3339,
    input: z.json(),
  });
});
export type CommandEnvelope = z.infer<typeof commandEnvelopeSchema>;

export const resultErrorSchema = z.lazy(() => parts().resultError);
export type ResultError = z.infer<typeof resultErrorSchema>;

export const resultEnvelopeSchema = z.lazy(() => {
  const { nonEmpty, routeFields, rfc3339, resultError } = parts();
  return z
    .object({
      /** Must equal the entry's event_id. */
      result_id: nonEmpty,
      ...routeFields,
      outcome: z.enum(['succeeded', 'failed']),
      output: z.optional(z.json()),
      error: z.optional(resultError),
      completed_at: rfc3339,
    })
    .check(
      z.refine((r) => (r.outcome === 'failed') === (r.error !== undefined), {
        message: 'a failed result carries an error, a succeeded one does not',
        path: ['error'],
      }),
    );
});
export type ResultEnvelope = z.infer<typeof resultEnvelopeSchema>;

const utf8 = new TextEncoder();

/** Validates and serializes a command envelope to the payload bytes of an entry. */
export function encodeCommand(envelope: z.input<typeof commandEnvelopeSchema>): Uint8Array {
  return utf8.encode(JSON.stringify(commandEnvelopeSchema.parse(envelope, IN_ENGLISH)));
}

/** Validates and serializes a result envelope to the payload bytes of an entry. */
export function encodeResult(envelope: z.input<typeof resultEnvelopeSchema>): Uint8Array {
  return utf8.encode(JSON.stringify(resultEnvelopeSchema.parse(envelope, IN_ENGLISH)));
}
