/**
 * Find by id (issue 17 §1): an entry id, an event id or a saga instance id → where it is now,
 * in every stream the deployment declares, for every consumer group (entry-state.ts).
 *
 * - An entry id (ms-seq) is read directly (XRANGE id id), in each stream and each DLT (a
 *   DLT record id is an entry id too).
 * - An event id goes to its entry through the publisher's dedupe record
 *   (`<stream>:pub:<event_id>` holds the entry id of the first append, for the dedupe
 *   window); outside the window, or with dedupe off, only the newest `scanLimit` entries of
 *   each stream are searched — the result says how the entry was found and how far the
 *   scan went, so "not found" is never mistaken for "never existed".
 * - DLT records are searched among the newest `scanLimit` of each DLT, by event id, source
 *   entry id or record id; their source entries are located too (even once trimmed).
 * - A saga instance id is recognised in the same scan (payload `instance_id`); the saga
 *   view (saga-trail.ts) shows its entries.
 *
 * Scans read pages (recent-entries.ts); the other reads of a stream share one round trip,
 * every key of one stream in each (Cluster-safe).
 */
import type { StreamEntry } from '../../entry/entry';
import type { DeploymentConfig } from '../../deployment/define-config';
import { isValidEventId } from '../../entry/keys';
import { command, type RedisPort, type RedisReply } from '../../redis/port';
import { decodeText } from '../../ground/text';
import { asArray, isBytes } from '../../redis/reply';
import { runOperations, runOperationsSettled, throwIfError } from '../../redis/script';
import { parseDeadLetterRecord, type DeadLetterRecord } from '../../redrive/record';
import { isEntryId, searchDeadLetters } from './dead-letters';
import { compareEntryIds, entryStates, groupCursors, type GroupState } from './entry-state';
import { DEFAULT_SCAN_LIMIT, eventIdOf, instanceIdOf, parseEntry, parseNewestEntries, scanStream, type ScanReport, type SearchedStream } from './recent-entries';
import { declaredStreams, type DeclaredStream } from './streams';

/** How a located entry was found. */
export type FoundBy = 'entry_id' | 'dedupe_record' | 'scan' | 'dead_letter';

export interface LocatedEntry {
  readonly stream: string;
  readonly entryId: string;
  readonly foundBy: FoundBy;
  /** False when the stream no longer holds the entry (trimmed, or deleted). */
  readonly inStream: boolean;
  /** The entry's fields, or the original fields of a DLT record when it left the stream. */
  readonly fields: ReadonlyMap<string, Uint8Array> | undefined;
  readonly groups: GroupState[];
}

export interface LocatedDeadLetter {
  readonly stream: string;
  readonly dlt: string;
  readonly record: DeadLetterRecord;
}

export interface StreamSearch extends SearchedStream {
  /** Entries whose payload carries this id as its saga instance_id. */
  readonly sagaEntries: number;
}

export interface LocateResult {
  readonly id: string;
  readonly kind: 'entry_id' | 'event_or_instance_id';
  readonly scanLimit: number;
  readonly entries: LocatedEntry[];
  readonly deadLetters: LocatedDeadLetter[];
  readonly searched: StreamSearch[];
}

export interface LocateOptions {
  readonly scanLimit?: number;
}

interface Found {
  entries: Map<string, { foundBy: FoundBy; entry: StreamEntry | undefined }>;
  deadLetters: DeadLetterRecord[];
  search: StreamSearch;
}

function dedupeEntryId(reply: RedisReply | undefined): string | undefined {
  // publish.lua stores "<entry id> <digest>" (older records: the entry id alone).
  if (!isBytes(reply)) return undefined;
  const first = decodeText(reply).split(' ', 1)[0]!;
  return isEntryId(first) ? first : undefined;
}

async function searchStream(port: RedisPort, target: DeclaredStream, id: string, scanLimit: number): Promise<Found & { groupsReply: RedisReply | Error }> {
  const { stream, keys } = target;
  const byEntryId = isEntryId(id);
  const direct = byEntryId
    ? [command('XRANGE', stream, id, id), command('XRANGE', keys.dlt, id, id)]
    : isValidEventId(id)
      ? [command('GET', keys.publishDedupePrefix + id)]
      : [];
  const [groupsReply, ...directReplies] = await runOperationsSettled(port, [command('XINFO', 'GROUPS', stream), ...direct]);
  const replies = directReplies.map((reply) => throwIfError(reply!));

  const records = new Map<string, DeadLetterRecord>();
  const dltScan = await searchDeadLetters(port, keys.dlt, (r) => r.id === id || r.eventId === id || r.sourceEntryId === id, scanLimit);
  for (const record of dltScan.records) records.set(record.id, record);
  const entries: Found['entries'] = new Map();
  let scan: ScanReport | undefined;
  let sagaEntries = 0;
  if (byEntryId) {
    const [entry] = parseNewestEntries(replies[0]!);
    if (entry !== undefined) entries.set(id, { foundBy: 'entry_id', entry });
    for (const item of asArray(replies[1], 'XRANGE reply')) records.set(id, parseDeadLetterRecord(item));
  } else {
    const deduped = dedupeEntryId(replies[0]);
    scan = await scanStream(port, stream, { limit: scanLimit }, (item, entryId) => {
      const entry = parseEntry(item);
      if (eventIdOf(entry.fields) === id || entryId === deduped) entries.set(entryId, { foundBy: entryId === deduped ? 'dedupe_record' : 'scan', entry });
      if (instanceIdOf(entry.fields, id) === id) sagaEntries++;
    });
    if (deduped !== undefined && !entries.has(deduped)) entries.set(deduped, { foundBy: 'dedupe_record', entry: undefined });
  }
  for (const record of records.values()) {
    if (record.sourceStream === stream && isEntryId(record.sourceEntryId) && !entries.has(record.sourceEntryId)) {
      entries.set(record.sourceEntryId, { foundBy: 'dead_letter', entry: undefined });
    }
  }
  return {
    groupsReply: groupsReply!,
    entries,
    deadLetters: [...records.values()],
    search: { stream, scanned: scan?.scanned ?? 0, scanStoppedBy: scan?.stoppedBy, dltScanned: dltScan.scan.scanned, dltScanStoppedBy: dltScan.scan.stoppedBy, sagaEntries },
  };
}

async function locateInStream(port: RedisPort, target: DeclaredStream, id: string, scanLimit: number): Promise<{ entries: LocatedEntry[]; found: Found }> {
  const found = await searchStream(port, target, id, scanLimit);
  const groups = groupCursors(found.groupsReply);
  const ids = [...found.entries.keys()];
  // Entries known only by id (dedupe record beyond the scan, DLT source): read them, and their states.
  const unread = ids.filter((entryId) => found.entries.get(entryId)!.entry === undefined);
  const [reads, states] = await Promise.all([
    unread.length === 0 ? [] : runOperations(port, unread.map((entryId) => command('XRANGE', target.stream, entryId, entryId))),
    entryStates(port, target.keys, groups, ids, found.deadLetters),
  ]);
  unread.forEach((entryId, i) => {
    const [item] = parseNewestEntries(reads[i]!);
    found.entries.get(entryId)!.entry = item;
  });
  const entries = ids.map((entryId): LocatedEntry => {
    const { foundBy, entry } = found.entries.get(entryId)!;
    const record = found.deadLetters.find((r) => r.sourceEntryId === entryId);
    return {
      stream: target.stream,
      entryId,
      foundBy,
      inStream: entry !== undefined,
      fields: entry?.fields ?? record?.original,
      groups: states.get(entryId) ?? [],
    };
  });
  return { entries, found };
}

export async function locateId(port: RedisPort, config: DeploymentConfig, id: string, options: LocateOptions = {}): Promise<LocateResult> {
  const scanLimit = options.scanLimit ?? DEFAULT_SCAN_LIMIT;
  const streams = declaredStreams(config);
  const perStream = await Promise.all(streams.map((target) => locateInStream(port, target, id, scanLimit)));
  return {
    id,
    kind: isEntryId(id) ? 'entry_id' : 'event_or_instance_id',
    scanLimit,
    entries: perStream.flatMap((s) => s.entries).sort((a, b) => compareEntryIds(a.entryId, b.entryId)),
    deadLetters: perStream.flatMap(({ found }, i) => found.deadLetters.map((record) => ({ stream: streams[i]!.stream, dlt: streams[i]!.keys.dlt, record }))),
    searched: perStream.map(({ found }) => found.search),
  };
}
