/**
 * Saga envelopes (SPEC §9): JSON on the wire, snake_case, checked with zod. Unknown fields
 * are dropped rather than refused, so a producer may add fields before every consumer
 * knows them; everything the contract names is required and checked.
 */
import * as z from 'zod/mini';

const nonEmpty = z.string().check(z.minLength(1), z.maxLength(256));
export const definitionDigestSchema = z.string().check(z.regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex characters'));
const rfc3339 = z.iso.datetime({ offset: true });

export const sagaActionSchema = z.enum(['execute', 'compensate']);
export type SagaAction = z.infer<typeof sagaActionSchema>;

/** Where an envelope belongs: one workflow definition (version + digest) and one step. */
const routeFields = {
  instance_id: nonEmpty,
  workflow: nonEmpty,
  definition_version: z.int().check(z.positive()),
  definition_digest: definitionDigestSchema,
  step: nonEmpty,
  action: sagaActionSchema,
};

export const commandEnvelopeSchema = z.object({
  /** Must equal the entry's event_id: the envelope cannot claim another identity. */
  command_id: nonEmpty,
  ...routeFields,
  issued_at: rfc3339,
  input: z.json(),
});
export type CommandEnvelope = z.infer<typeof commandEnvelopeSchema>;

export const resultErrorSchema = z.object({ code: nonEmpty, message: z.string().check(z.maxLength(4096)) });
export type ResultError = z.infer<typeof resultErrorSchema>;

export const resultEnvelopeSchema = z
  .object({
    /** Must equal the entry's event_id. */
    result_id: nonEmpty,
    ...routeFields,
    outcome: z.enum(['succeeded', 'failed']),
    output: z.optional(z.json()),
    error: z.optional(resultErrorSchema),
    completed_at: rfc3339,
  })
  .check(
    z.refine((r) => (r.outcome === 'failed') === (r.error !== undefined), {
      message: 'a failed result carries an error, a succeeded one does not',
      path: ['error'],
    }),
  );
export type ResultEnvelope = z.infer<typeof resultEnvelopeSchema>;

const utf8 = new TextEncoder();

/** Validates and serializes a command envelope to the payload bytes of an entry. */
export function encodeCommand(envelope: z.input<typeof commandEnvelopeSchema>): Uint8Array {
  return utf8.encode(JSON.stringify(commandEnvelopeSchema.parse(envelope)));
}

/** Validates and serializes a result envelope to the payload bytes of an entry. */
export function encodeResult(envelope: z.input<typeof resultEnvelopeSchema>): Uint8Array {
  return utf8.encode(JSON.stringify(resultEnvelopeSchema.parse(envelope)));
}
