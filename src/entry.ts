/** A stream entry as the transport hands it around, and the wire field names (SPEC §3.1). */
import { ReplyShapeError } from './ground/errors';
import type { RedisReply } from './redis/port';
import { decodeText } from './ground/text';
import { asArray, asText, isBytes } from './redis/reply';

export const Fields = {
  event: 'event',
  eventId: 'event_id',
  payload: 'payload',
  traceparent: 'traceparent',
  keyId: 'key_id',
  sig: 'sig',
} as const;

export interface StreamEntry {
  readonly id: string;
  /** Field name → raw bytes, in stream order. */
  readonly fields: ReadonlyMap<string, Uint8Array>;
  /** Delivery count after this delivery (1 for a first read). */
  readonly deliveries: number;
  /** True when taken from another consumer (or an earlier run) through XAUTOCLAIM. */
  readonly reclaimed: boolean;
  /**
   * True when the entry repeats a field name (names compared as text): which value counts
   * is ambiguous, so the entry is dead-lettered `entry_malformed` before any processor
   * reads it (SPEC §4). `fields` then holds the last value of each name.
   */
  readonly repeatsFieldName?: boolean;
}

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
 * A field name as text. The wire names are matched byte for byte and answered with their
 * constant, with no decoding: this runs for every field of every entry, and a TextDecoder
 * call per name was about a tenth of the Node work per entry (bench/entry-work.ts). Any
 * other name is decoded as before, so names still compare as text.
 */
function fieldName(bytes: Uint8Array): string {
  const candidates = WIRE_NAMES[bytes.length];
  if (candidates !== undefined) {
    for (const known of candidates) if (spells(bytes, known.bytes)) return known.text;
  }
  return decodeText(bytes);
}

function parseFields(reply: RedisReply | undefined, id: string): Map<string, Uint8Array> {
  // Descriptions are built only when a reply is malformed: this runs for every field of
  // every entry, and a template string per call showed up as garbage at large batches.
  if (!Array.isArray(reply)) throw new ReplyShapeError(`fields of ${id}: expected an array`);
  const fields = new Map<string, Uint8Array>();
  for (let i = 0; i + 1 < reply.length; i += 2) {
    const name = reply[i];
    const value = reply[i + 1];
    if (!isBytes(name) || !isBytes(value)) throw new ReplyShapeError(`field ${i / 2} of ${id}: expected strings`);
    fields.set(fieldName(name), value);
  }
  return fields;
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
  return asArray(reply, 'entry list').map((item, index) => {
    const pair = asArray(item, 'entry');
    const id = asText(pair[0], 'entry id');
    const fields = parseFields(pair[1], id);
    const entry: StreamEntry = { id, fields, deliveries: deliveriesOf(index), reclaimed };
    // Fewer names than pairs: a name came twice. Counted once per entry, not per field.
    return fields.size < (pair[1] as RedisReply[]).length >> 1 ? { ...entry, repeatsFieldName: true } : entry;
  });
}

/** `ms-seq` → milliseconds part, or undefined when the id is not of that form. */
export function entryIdMillis(id: string): number | undefined {
  const match = /^(\d+)-\d+$/.exec(id);
  return match ? Number(match[1]) : undefined;
}
