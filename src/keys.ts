/**
 * Key names (SPEC §3.4). Every key of a stream derives from the stream name, so under
 * Redis Cluster it shares the stream's hash slot and one script can touch them all.
 */

const NAME_PATTERN = /^[\x21-\x7e]{1,256}$/;

/** Printable ASCII, no spaces, 1..=256 bytes. */
export function isValidKeyName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

/**
 * The part of a key Redis Cluster hashes: the text between the first `{` and the next `}`
 * when non-empty, otherwise the whole key.
 */
export function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) return key.slice(open + 1, close);
  }
  return key;
}

export function hasHashTag(key: string): boolean {
  return hashTagOf(key) !== key;
}

export interface StreamKeys {
  readonly stream: string;
  readonly dlt: string;
  /** Dead-letter markers are `<markerPrefix><group>:<source_entry_id>` (see markerKey). */
  readonly markerPrefix: string;
  readonly cursor: string;
  /** Publish-dedupe records are `<publishDedupePrefix><event_id>`. */
  readonly publishDedupePrefix: string;
}

export interface StreamKeyOverrides {
  readonly dlt?: string;
  readonly markerPrefix?: string;
  readonly cursor?: string;
  readonly publishDedupePrefix?: string;
}

export function deriveStreamKeys(stream: string, group: string, overrides: StreamKeyOverrides = {}): StreamKeys {
  return {
    stream,
    dlt: overrides.dlt ?? `${stream}:dlt`,
    markerPrefix: overrides.markerPrefix ?? `${stream}:dlt:marker:`,
    cursor: overrides.cursor ?? `${stream}:cursor:${group}`,
    publishDedupePrefix: overrides.publishDedupePrefix ?? `${stream}:pub:`,
  };
}

/**
 * The dead-letter marker of one group's verdict on one source entry (SPEC §3.4). Keyed by
 * group and entry id, never by event id: a marker makes a replayed settle of the same entry
 * by the same group idempotent, and must never hide another group's verdict on that entry
 * or another entry that reuses an event id. Entry ids are always key-safe, so entries with
 * and without an event id share one rule.
 */
export function markerKey(keys: Pick<StreamKeys, 'markerPrefix'>, group: string, sourceEntryId: string): string {
  return `${keys.markerPrefix}${group}:${sourceEntryId}`;
}

/** Event ids become key suffixes (markers, dedupe records): same rule as key names. */
export function isValidEventId(eventId: string): boolean {
  return NAME_PATTERN.test(eventId);
}
