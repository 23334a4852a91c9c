/**
 * Bounded scans of a stream's (or a DLT's) newest entries, and the two identities the
 * dashboard looks for in them: the `event_id` field, and the saga `instance_id` inside a
 * JSON payload (SPEC §9 envelopes carry it; src/saga/ordering.ts reads it the same way).
 *
 * A scan is bounded by entries *and* bytes, and reads in pages sized from the entries seen
 * so far: a thousand 1 MiB entries must not land in one reply (a Worker has 128 MB), so a
 * page aims at PAGE_BYTES and the scan stops after `byteBudget`, saying so. Only what the
 * visitor keeps outlives its page.
 */
import { Fields, parseEntries, type StreamEntry } from '../../entry/entry';
import { command, type RedisPort, type RedisReply } from '../../redis/port';
import { asArray, asText, isBytes } from '../../redis/reply';
import { runCommand } from '../../redis/script';
import { decodeText, exactUtf8Text } from '../../ground/text';

/** Newest entries each scan reads per stream (and per DLT) unless told otherwise. */
export const DEFAULT_SCAN_LIMIT = 1_000;
export const MAX_SCAN_LIMIT = 10_000;
/** Bytes one scan reads at most (field names and values), whatever its entry limit. */
export const DEFAULT_SCAN_BYTES = 8 * 1024 * 1024;
const PAGE_BYTES = 1024 * 1024;
const FIRST_PAGE = 10;
const MAX_PAGE = 1_000;

export interface ScanBounds {
  readonly limit: number;
  readonly byteBudget?: number;
  /** Newest first (default), or oldest first (the order redrive restores entries in). */
  readonly order?: 'newest' | 'oldest';
  /** Resume past this id (exclusive) in the scan's order: a previous scan's `last`. */
  readonly resumeAfter?: string;
}

export interface ScanReport {
  /** Entries read. */
  readonly scanned: number;
  /** Id of the last (oldest) entry read, where a further scan would resume. */
  readonly last: string | undefined;
  /** `end`: nothing older is left; `limit` / `bytes`: a bound stopped it; `visitor`: the visitor did. */
  readonly stoppedBy: 'end' | 'limit' | 'bytes' | 'visitor';
}

/** How much of one stream and of its DLT a search (find by id, a saga's trail) read. */
export interface SearchedStream {
  readonly stream: string;
  /** Newest entries of the stream read by the scan (0 when an entry id made a scan needless). */
  readonly scanned: number;
  /** Why the stream scan stopped (`end`: the whole stream was searched); undefined when none ran. */
  readonly scanStoppedBy: ScanReport['stoppedBy'] | undefined;
  readonly dltScanned: number;
  readonly dltScanStoppedBy: ScanReport['stoppedBy'];
}

function replyBytes(reply: RedisReply | undefined): number {
  if (isBytes(reply)) return reply.length;
  return Array.isArray(reply) ? reply.reduce((sum: number, item) => sum + replyBytes(item), 0) : 0;
}

/**
 * Reads entries in the bounds' order, handing each raw `[id, fields]` item to `visit`, which
 * returns true to stop after it.
 */
export async function scanStream(port: RedisPort, key: string, bounds: ScanBounds, visit: (item: RedisReply, id: string) => boolean | void): Promise<ScanReport> {
  const budget = bounds.byteBudget ?? DEFAULT_SCAN_BYTES;
  let last = bounds.resumeAfter;
  let scanned = 0;
  let bytes = 0;
  let page = Math.min(FIRST_PAGE, bounds.limit);
  for (;;) {
    const from = last === undefined ? undefined : `(${last}`;
    const reply = await runCommand(
      port,
      bounds.order === 'oldest' ? command('XRANGE', key, from ?? '-', '+', 'COUNT', page) : command('XREVRANGE', key, from ?? '+', '-', 'COUNT', page),
    );
    const items = asArray(reply, 'XREVRANGE reply');
    for (const item of items) {
      last = asText(asArray(item, 'entry')[0], 'entry id');
      scanned++;
      bytes += replyBytes(item);
      if (visit(item, last) === true) return { scanned, last, stoppedBy: 'visitor' };
    }
    if (items.length < page) return { scanned, last, stoppedBy: 'end' };
    if (scanned >= bounds.limit) return { scanned, last, stoppedBy: 'limit' };
    if (bytes >= budget) return { scanned, last, stoppedBy: 'bytes' };
    const perEntry = Math.max(1, bytes / scanned);
    page = Math.max(1, Math.min(MAX_PAGE, bounds.limit - scanned, Math.floor(PAGE_BYTES / perEntry)));
  }
}

export function parseNewestEntries(reply: RedisReply): StreamEntry[] {
  return parseEntries(reply, () => 0, false);
}

export function parseEntry(item: RedisReply): StreamEntry {
  return parseEntries([item], () => 0, false)[0]!;
}

export function eventIdOf(fields: ReadonlyMap<string, Uint8Array>): string | undefined {
  const bytes = fields.get(Fields.eventId);
  return bytes === undefined ? undefined : decodeText(bytes);
}

/**
 * The payload's saga instance id, or undefined when the payload is not a JSON object with a
 * string `instance_id`. With `wanted`, payloads whose text cannot contain it are skipped
 * before parsing (a scan of a thousand entries parses only the few that may match).
 */
export function instanceIdOf(fields: ReadonlyMap<string, Uint8Array>, wanted?: string): string | undefined {
  const bytes = fields.get(Fields.payload);
  const text = bytes === undefined ? undefined : exactUtf8Text(bytes);
  if (text === undefined || !text.includes('instance_id')) return undefined;
  if (wanted !== undefined && !text.includes(JSON.stringify(wanted).slice(1, -1))) return undefined;
  try {
    const value = JSON.parse(text) as { instance_id?: unknown } | null;
    return typeof value?.instance_id === 'string' ? value.instance_id : undefined;
  } catch {
    return undefined;
  }
}
