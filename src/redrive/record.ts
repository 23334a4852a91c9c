/**
 * Dead-letter records (SPEC §3.3) as written by settle.lua, parsed from XRANGE replies.
 * The original entry's fields are kept as raw bytes, in their recorded order, so what a
 * caller inspects is exactly what a redrive would restore — whether settle copied them
 * field by field (`orig_<name>`) or packed an entry too wide for that (`packed_original`).
 * The rules for refusing a record (`unrestorable`) mirror lua/redrive.lua's.
 */
import type { StreamEntry } from '../entry/entry';
import { entryIdMillis } from '../entry/entry';
import type { RedisReply } from '../redis/port';
import { decodeText } from '../ground/text';
import { asArray, asText, isBytes } from '../redis/reply';
import { ReplyShapeError } from '../ground/errors';
import { unpackFields } from './packed';

/** Field names of a DLT record (a wire contract shared with lua/settle.lua and lua/redrive.lua). */
export const DeadLetterFields = {
  eventId: 'event_id',
  reason: 'reason',
  sourceStream: 'source_stream',
  sourceEntryId: 'source_entry_id',
  group: 'group',
  deliveries: 'deliveries',
  deadLetteredAt: 'dead_lettered_at',
  /** The whole original entry, cmsgpack-packed, for an entry too wide to copy field by field. */
  packedOriginal: 'packed_original',
} as const;

/** Every original field of the source entry is recorded as `orig_<name>`. */
export const ORIGINAL_FIELD_PREFIX = 'orig_';

/** Widest entry redrive restores (lua/redrive.lua MAX_RESTORE_FIELDS: its cost grows with width squared). */
export const MAX_RESTORE_FIELDS = 10_000;

/** How the original entry was recorded: field by field, packed into one value, or not at all. */
export type OriginalForm = 'fields' | 'packed' | 'none';

/**
 * Why redrive refuses a record (lua/redrive.lua): `packed_unreadable` — packed_original is
 * not a flat array of strings; `ambiguous_original` — both packed_original and orig_ fields;
 * `fields_omitted` — written by an older version that kept only a count (orig_omitted_fields);
 * `too_wide` — over MAX_RESTORE_FIELDS fields.
 */
export type UnrestorableReason = 'packed_unreadable' | 'ambiguous_original' | 'fields_omitted' | 'too_wide';

/** Older versions recorded an entry over 3,900 fields as this single original field and a count. */
const OMITTED_FIELD = 'omitted_fields';
const OMITTED_ABOVE = 3_900;

export interface DeadLetterRecord {
  /** The DLT entry id (what redrive takes). */
  readonly id: string;
  /** Empty when the source entry had no event_id. */
  readonly eventId: string;
  readonly reason: string;
  readonly sourceStream: string;
  readonly sourceEntryId: string;
  readonly group: string;
  /** Delivery count when it was dead-lettered; 0 if the record does not say. */
  readonly deliveries: number;
  /** ms epoch; falls back to the DLT id's time when the field is absent or unreadable. */
  readonly deadLetteredAt: number;
  /** The source entry's fields, prefix removed, bytes and order exactly as recorded (a repeated name: its last value). */
  readonly original: ReadonlyMap<string, Uint8Array>;
  /** The same fields as [name, value] pairs, repeats kept: exactly what a redrive appends. */
  readonly originalFields: ReadonlyArray<readonly [string, Uint8Array]>;
  readonly originalForm: OriginalForm;
  /** Set when redrive would refuse the record because its original cannot be restored exactly. */
  readonly unrestorable: UnrestorableReason | undefined;
}

function integerOr(bytes: Uint8Array | undefined, fallback: number): number {
  if (bytes === undefined) return fallback;
  const value = Number(decodeText(bytes));
  return Number.isSafeInteger(value) && value >= 0 ? value : fallback;
}

/**
 * Parses one `[id, [field, value, ...]]` item. Lenient by design: a record that lacks a
 * field parses with an empty value, so one odd record never hides the others from an
 * operator; redrive itself refuses records without a matching source stream or originals.
 */
export function parseDeadLetterRecord(item: RedisReply | undefined): DeadLetterRecord {
  const pair = asArray(item, 'DLT entry');
  const id = asText(pair[0], 'DLT entry id');
  const flat = asArray(pair[1], `fields of DLT entry ${id}`);
  const own = new Map<string, Uint8Array>();
  const copied: Array<[string, Uint8Array]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = asText(flat[i], `field name of DLT entry ${id}`);
    const value = flat[i + 1];
    if (!isBytes(value)) throw new ReplyShapeError(`field value of DLT entry ${id}`);
    if (name.startsWith(ORIGINAL_FIELD_PREFIX)) copied.push([name.slice(ORIGINAL_FIELD_PREFIX.length), value]);
    else own.set(name, value);
  }
  const { form, fields, unrestorable } = originalOf(copied, own.get(DeadLetterFields.packedOriginal));
  const text = (name: string) => {
    const bytes = own.get(name);
    return bytes === undefined ? '' : decodeText(bytes);
  };
  return {
    id,
    eventId: text(DeadLetterFields.eventId),
    reason: text(DeadLetterFields.reason),
    sourceStream: text(DeadLetterFields.sourceStream),
    sourceEntryId: text(DeadLetterFields.sourceEntryId),
    group: text(DeadLetterFields.group),
    deliveries: integerOr(own.get(DeadLetterFields.deliveries), 0),
    deadLetteredAt: integerOr(own.get(DeadLetterFields.deadLetteredAt), entryIdMillis(id) ?? 0),
    original: new Map(fields),
    originalFields: fields,
    originalForm: form,
    unrestorable,
  };
}

interface Original {
  readonly form: OriginalForm;
  readonly fields: ReadonlyArray<readonly [string, Uint8Array]>;
  readonly unrestorable: UnrestorableReason | undefined;
}

function originalOf(copied: Array<[string, Uint8Array]>, packed: Uint8Array | undefined): Original {
  if (packed !== undefined) {
    const unpacked = unpackFields(packed);
    const fields = (unpacked ?? []).map(([name, value]) => [decodeText(name), value] as const);
    const unrestorable = copied.length > 0 ? 'ambiguous_original' : unpacked === undefined ? 'packed_unreadable' : tooWide(fields);
    return { form: 'packed', fields, unrestorable };
  }
  if (copied.length === 0) return { form: 'none', fields: [], unrestorable: undefined };
  return { form: 'fields', fields: copied, unrestorable: onlyACount(copied) ? 'fields_omitted' : tooWide(copied) };
}

function tooWide(fields: readonly unknown[]): UnrestorableReason | undefined {
  return fields.length > MAX_RESTORE_FIELDS ? 'too_wide' : undefined;
}

/** A record from an older version that replaced a wide entry's fields by their count. */
function onlyACount(copied: ReadonlyArray<readonly [string, Uint8Array]>): boolean {
  if (copied.length !== 1 || copied[0]![0] !== OMITTED_FIELD) return false;
  const count = decodeText(copied[0]![1]);
  return /^\d+$/.test(count) && Number(count) > OMITTED_ABOVE;
}

/** The source entry as it was when dead-lettered: what settle.lua derived the marker from. */
export function originalEntry(record: DeadLetterRecord): StreamEntry {
  return { id: record.sourceEntryId, fields: record.original, deliveries: record.deliveries, reclaimed: false };
}

/**
 * A record's identity and verdict as JSON, in the snake_case names of the stored fields: the
 * part every JSON view of a dead letter shares (the CLI's `dlt list --json`, the dashboard).
 */
export function deadLetterSummaryJson(record: DeadLetterRecord, dlt: string) {
  return {
    id: record.id,
    dlt,
    stream: record.sourceStream,
    source_entry_id: record.sourceEntryId,
    event_id: record.eventId,
    group: record.group,
    reason: record.reason,
    deliveries: record.deliveries,
    dead_lettered_at: record.deadLetteredAt,
  };
}
