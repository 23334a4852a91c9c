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
  /** Dead-letter markers are `<markerPrefix><event_id>`. */
  readonly markerPrefix: string;
  /** Markers for entries with no usable event_id, keyed by entry id; disjoint from markerPrefix. */
  readonly entryMarkerPrefix: string;
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
  const dlt = overrides.dlt ?? `${stream}:dlt`;
  return {
    stream,
    dlt,
    markerPrefix: overrides.markerPrefix ?? `${stream}:dlt:marker:`,
    entryMarkerPrefix: `${dlt}:entry-marker:`,
    cursor: overrides.cursor ?? `${stream}:cursor:${group}`,
    publishDedupePrefix: overrides.publishDedupePrefix ?? `${stream}:pub:`,
  };
}

/** Event ids become key suffixes (markers, dedupe records): same rule as key names. */
export function isValidEventId(eventId: string): boolean {
  return NAME_PATTERN.test(eventId);
}
