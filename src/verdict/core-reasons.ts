/**
 * The core's own dead-letter reasons, in a file of their own: the decision step (decide.ts)
 * and the processors (processor.ts) both refuse entries with them, and neither should have
 * to import the other for a table of strings.
 */

/** Stable dead-letter reasons of the core (a public contract: never rename). */
export const CoreReasons = {
  eventIdMissing: 'event_id_missing',
  eventIdInvalid: 'event_id_invalid',
  payloadMissing: 'payload_missing',
  payloadUndecodable: 'payload_undecodable',
  payloadSchemaInvalid: 'payload_schema_invalid',
  /**
   * The entry repeats a field name (checked before any processor runs, in decide.ts), or a
   * field name is not UTF-8 (SPEC §3.4; checked first by the built-in processors).
   */
  entryMalformed: 'entry_malformed',
} as const;
