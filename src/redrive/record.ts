/**
 * Dead-letter records (SPEC §3.3) as written by settle.lua, parsed from XRANGE replies.
 * The original entry's fields are kept as raw bytes, in their recorded order, so what a
 * caller inspects is exactly what a redrive would restore.
 */
import type { StreamEntry } from '../entry';
import { entryIdMillis } from '../entry';
import type { RedisReply } from '../redis/port';
import { asArray, asText, decodeText, isBytes } from '../redis/reply';
import { ReplyShapeError } from '../errors';

/** Field names of a DLT record (a wire contract shared with lua/settle.lua and lua/redrive.lua). */
export const DeadLetterFields = {
  eventId: 'event_id',
  reason: 'reason',
  sourceStream: 'source_stream',
  sourceEntryId: 'source_entry_id',
  group: 'group',
  deliveries: 'deliveries',
  deadLetteredAt: 'dead_lettered_at',
} as const;

/** Every original field of the source entry is recorded as `orig_<name>`. */
export const ORIGINAL_FIELD_PREFIX = 'orig_';

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
  /** The source entry's fields, prefix removed, bytes and order exactly as recorded. */
  readonly original: ReadonlyMap<string, Uint8Array>;
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
  const original = new Map<string, Uint8Array>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = asText(flat[i], `field name of DLT entry ${id}`);
    const value = flat[i + 1];
    if (!isBytes(value)) throw new ReplyShapeError(`field value of DLT entry ${id}`);
    if (name.startsWith(ORIGINAL_FIELD_PREFIX)) original.set(name.slice(ORIGINAL_FIELD_PREFIX.length), value);
    else own.set(name, value);
  }
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
    original,
  };
}

/** The source entry as it was when dead-lettered: what settle.lua derived the marker from. */
export function originalEntry(record: DeadLetterRecord): StreamEntry {
  return { id: record.sourceEntryId, fields: record.original, deliveries: record.deliveries, reclaimed: false };
}
