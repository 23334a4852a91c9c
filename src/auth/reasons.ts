/**
 * Dead-letter reasons added by signed entries and saga envelopes (SPEC §4). A public
 * contract: operators alert and redrive on them, so never rename one. The core's reasons
 * (event_id_missing, event_id_invalid, payload_missing, payload_undecodable,
 * payload_schema_invalid) live in CoreReasons and are reused, not repeated here.
 */
export const DeadLetterReasons = {
  /** HMAC mode, entry has no `sig` field. Counted as an auth rejection. */
  signatureMissing: 'signature_missing',
  /** `sig` is not 64 lowercase hex chars, or does not match the entry. Auth rejection. */
  signatureInvalid: 'signature_invalid',
  /** `key_id` absent, not the stream's key, or not in the keyring. Auth rejection. */
  signatureKeyUnknown: 'signature_key_unknown',
  /** The authenticated producer is not allowed to report results for the step. Auth rejection. */
  producerNotAllowed: 'producer_not_allowed',
  /** The envelope's command_id / result_id differs from the entry's event_id (forged identity). */
  envelopeIdMismatch: 'envelope_id_mismatch',
  /**
   * The entry's unsigned `flow_key` field differs from its envelope's signed instance_id: a
   * copy under another key could run beside the real instance (SPEC §5.7), so it never runs.
   */
  flowKeyMismatch: 'flow_key_mismatch',
  /** Command for another workflow than this consumer's. */
  routeWorkflowMismatch: 'route_workflow_mismatch',
  /** Command for another definition version. */
  routeVersionMismatch: 'route_version_mismatch',
  /** Command for another definition digest (exact consumers only). */
  routeDigestMismatch: 'route_digest_mismatch',
  /** Command for another step. */
  routeStepMismatch: 'route_step_mismatch',
} as const;

export type DeadLetterReason = (typeof DeadLetterReasons)[keyof typeof DeadLetterReasons];
