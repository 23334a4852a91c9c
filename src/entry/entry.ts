/** A stream entry as the transport hands it around, and the wire field names (SPEC §3.1). */
import { ReplyShapeError } from '../ground/errors';
import type { RedisReply } from '../redis/port';
import { decodeText, exactUtf8Text, surrogateEscapedText } from '../ground/text';
import { asArray, asText, isBytes } from '../redis/reply';
import { EntryFields, layoutOf, NO_FIELDS, type FieldLayout } from './entry-fields';

export const Fields = {
  event: 'event',
  eventId: 'event_id',
  payload: 'payload',
  traceparent: 'traceparent',
  /** Unsigned: the concurrency / ordering key a publisher names (SPEC §5.7; docs/design/flow-control.md §1). */
  flowKey: 'flow_key',
  keyId: 'key_id',
  sig: 'sig',
} as const;

export interface StreamEntry {
  readonly id: string;
  /** Field name → raw bytes, in stream order. */
  readonly fields: ReadonlyMap<string, Uint8Array>;
  /** Delivery count after this delivery (1 for a first read). */
  readonly deliveries: number;
  /** True when taken from the PEL (another consumer's, or an earlier run's) by a claim's reclaim. */
  readonly reclaimed: boolean;
  /**
   * A reclaimed entry's idle time (ms, Redis clock) when the claim took it. A run that gives
   * it back unstarted restores at least this idle, so the entry stays due (its backoff had
   * passed) instead of waiting its backoff again for an attempt that never happened.
   */
  readonly idleBeforeClaimMs?: number;
  /**
   * True when the entry repeats a field name (names compared as bytes): which value counts
   * is ambiguous, so the entry is dead-lettered `entry_malformed` before any processor
   * reads it (SPEC §4). `fields` then holds the last value of each name.
   */
  readonly repeatsFieldName?: boolean;
  /**
   * True when a field name is not well-formed UTF-8: the entry is `entry_malformed`
   * (SPEC §3.4). In `fields` such a name is surrogate-escaped text (surrogateEscapedText),
   * so it never equals, merges with or shadows another name.
   */
  readonly fieldNameNotUtf8?: boolean;
}

/** True when the entry's field names make it `entry_malformed` (SPEC §3.4, §4). */
export function hasMalformedFields(entry: StreamEntry): boolean {
  return entry.repeatsFieldName === true || entry.fieldNameNotUtf8 === true;
}

/**
 * The entry's flow key (SPEC §5.7), its bytes as the claim script reads them (the last
 * `flow_key` field); undefined when none. Empty names no key, as every reader takes it.
 */
export function flowKeyOf(entry: StreamEntry): Uint8Array | undefined {
  const bytes = entry.fields.get(Fields.flowKey);
  return bytes === undefined || bytes.length === 0 ? undefined : bytes;
}

/**
 * A field's value as text for display, tracing and values already checked (an `event_id`
 * that passed isValidEventIdBytes is printable ASCII, so its text is its bytes). A leading
 * BOM is kept; malformed bytes read as U+FFFD, so never compare an unchecked value this way.
 */
export function fieldText(entry: StreamEntry, name: string): string | undefined {
  const bytes = entry.fields.get(name);
  return bytes === undefined ? undefined : decodeText(bytes);
}

interface WireName {
  readonly text: string;
  readonly bytes: Uint8Array;
}

/** The wire names, found by their bytes: indexed by byte length (today one name per length). */
const WIRE_NAMES: WireName[][] = [];
for (const text of Object.values(Fields)) {
  const bytes = new TextEncoder().encode(text);
  (WIRE_NAMES[bytes.length] ??= []).push({ text, bytes });
}

function spells(bytes: Uint8Array, expected: Uint8Array): boolean {
  let i = 0;
  while (i < expected.length && expected[i] === bytes[i]) i += 1;
  return i === expected.length;
}

/**
 * A field name as the text whose UTF-8 is exactly its bytes, or undefined when the name is
 * not UTF-8 (SPEC §3.4: never a lenient decode, which drops a BOM and merges malformed
 * bytes). The wire names are matched byte for byte and answered with their constant, with
 * no decoding: this runs for every field of every entry, and a TextDecoder call per name
 * was about a tenth of the Node work per entry (bench/entry-work.ts).
 */
function fieldName(bytes: Uint8Array): string | undefined {
  const candidates = WIRE_NAMES[bytes.length];
  if (candidates !== undefined) {
    for (const known of candidates) if (spells(bytes, known.bytes)) return known.text;
  }
  return exactUtf8Text(bytes);
}

/**
 * The names of one entry's `[name, value, ...]` pairs, checked to be bytes. The previous
 * entry's layout is reused when the names are the same (the usual case on a stream), so
 * most entries allocate no names array.
 */
function fieldLayout(pairs: RedisReply | undefined, id: string, previous: FieldLayout): FieldLayout {
  // Descriptions are built only when a reply is malformed: this runs for every field of
  // every entry, and a template string per call showed up as garbage at large batches.
  if (!Array.isArray(pairs)) throw new ReplyShapeError(`fields of ${id}: expected an array`);
  const count = pairs.length >> 1;
  const shared = previous.names.length === count ? previous.names : undefined;
  let names: string[] | undefined;
  let nameNotUtf8 = false;
  for (let i = 0; i < count; i += 1) {
    const name = pairs[2 * i];
    const value = pairs[2 * i + 1];
    if (!isBytes(name) || !isBytes(value)) throw new ReplyShapeError(`field ${i} of ${id}: expected strings`);
    const exact = fieldName(name);
    if (exact === undefined) nameNotUtf8 = true;
    // Escaped, a name that is not UTF-8 still has text of its own: equal text, equal bytes.
    const text = exact ?? surrogateEscapedText(name);
    if (names === undefined) {
      if (shared !== undefined && shared[i] === text) continue;
      names = shared === undefined ? [] : shared.slice(0, i);
    }
    names.push(text);
  }
  if (names === undefined) return shared !== undefined ? previous : NO_FIELDS;
  return layoutOf(names, nameNotUtf8);
}

/** The entry, marked with what makes its field names malformed. */
function markedMalformed(entry: StreamEntry, layout: FieldLayout): StreamEntry {
  let marked = entry;
  if (layout.size < layout.names.length) marked = { ...marked, repeatsFieldName: true };
  if (layout.nameNotUtf8) marked = { ...marked, fieldNameNotUtf8: true };
  return marked;
}

/**
 * Parses `[[id, [f, v, ...]], ...]` (XAUTOCLAIM / XREADGROUP entry lists). A malformed
 * entry is not an error here: it is marked, and becomes that entry's own dead-letter
 * while the rest of the batch goes on.
 */
export function parseEntries(
  reply: RedisReply | undefined,
  deliveriesOf: (index: number) => number,
  reclaimed: boolean,
): StreamEntry[] {
  const list = asArray(reply, 'entry list');
  const entries: StreamEntry[] = [];
  let layout = NO_FIELDS;
  for (let index = 0; index < list.length; index += 1) {
    const pair = asArray(list[index], 'entry');
    const id = asText(pair[0], 'entry id');
    const pairs = pair[1];
    layout = fieldLayout(pairs, id, layout);
    const entry: StreamEntry = { id, fields: new EntryFields(layout, pairs as RedisReply[]), deliveries: deliveriesOf(index), reclaimed };
    // Fewer names than pairs (a name came twice), or a name not UTF-8: once per entry, not per field.
    entries.push(layout.size < layout.names.length || layout.nameNotUtf8 ? markedMalformed(entry, layout) : entry);
  }
  return entries;
}

/** `ms-seq` → milliseconds part, or undefined when the id is not of that form. */
export function entryIdMillis(id: string): number | undefined {
  const match = /^(\d+)-\d+$/.exec(id);
  return match ? Number(match[1]) : undefined;
}
