/**
 * The dead-letter marker of one group's verdict on one source entry (SPEC §3.4). Keyed by
 * group and entry id, never by event id: a marker makes a replayed settle of the same entry
 * by the same group idempotent, and must never hide another group's verdict on that entry
 * or another entry that reuses an event id. Entry ids are always key-safe, so entries with
 * and without an event id share one rule. Settle writes markers by it, redrive deletes them
 * by it, and config checks size the longest one by it.
 */
export function markerKeyFor(keys: { readonly markerPrefix: string }, group: string, sourceEntryId: string): string {
  return `${keys.markerPrefix}${group}:${sourceEntryId}`;
}
