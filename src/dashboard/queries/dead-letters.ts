/**
 * The DLT browser's reads: reason counts, newest-first pages, one record. Pure reads; the
 * records are parsed by src/redrive/record.ts, so what the dashboard shows is exactly what
 * a redrive would restore (packed originals decoded, unrestorable ones flagged).
 *
 * Counting reasons means reading records, and a record holds the whole original entry: the
 * count covers the newest `countLimit` records only, and says so (`counted` < `length`).
 */
import { ConfigError } from '../../errors';
import { command, type RedisPort } from '../../redis/port';
import { asArray, asInteger } from '../../redis/reply';
import { runCommand, runOperations } from '../../redis/script';
import { parseDeadLetterRecord, type DeadLetterRecord } from '../../redrive/record';

export const DEFAULT_COUNT_LIMIT = 1_000;
export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 500;
/** A filtered page stops after scanning this many records, matched or not. */
export const MAX_PAGE_SCAN = 2_000;

const ENTRY_ID = /^\d+-\d+$/;

export function isEntryId(text: string): boolean {
  return ENTRY_ID.test(text);
}

export interface ReasonCount {
  readonly reason: string;
  readonly count: number;
}

export interface DeadLetterSummary {
  readonly dlt: string;
  /** XLEN of the DLT. */
  readonly length: number;
  /** Records the reason counts cover (the newest ones); equals `length` when all were read. */
  readonly counted: number;
  /** Most frequent first. */
  readonly reasons: ReasonCount[];
}

export async function summarizeDeadLetters(port: RedisPort, dlt: string, countLimit = DEFAULT_COUNT_LIMIT): Promise<DeadLetterSummary> {
  const [length, newest] = await runOperations(port, [command('XLEN', dlt), command('XREVRANGE', dlt, '+', '-', 'COUNT', countLimit)]);
  const records = asArray(newest, 'XREVRANGE reply').map(parseDeadLetterRecord);
  const counts = new Map<string, number>();
  for (const record of records) counts.set(record.reason, (counts.get(record.reason) ?? 0) + 1);
  const reasons = [...counts].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  return { dlt, length: asInteger(length, 'XLEN reply'), counted: records.length, reasons };
}

export interface NewestFirstQuery {
  /** Continue with records older than this DLT id (exclusive): the `next` of the previous page. */
  readonly before?: string;
  readonly pageSize?: number;
  readonly reason?: string;
}

export interface NewestFirstPage {
  readonly records: DeadLetterRecord[];
  /** DLT records read to fill the page (more than `records` when a reason filter skipped some). */
  readonly scanned: number;
  /** Pass as `before` for the next (older) page; undefined at the oldest record. */
  readonly next: string | undefined;
}

function pageProblems(query: NewestFirstQuery) {
  const size = query.pageSize ?? DEFAULT_PAGE_SIZE;
  const problems = [];
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) problems.push({ path: 'pageSize', message: `must be an integer in 1..=${MAX_PAGE_SIZE}` });
  if (query.before !== undefined && !isEntryId(query.before)) problems.push({ path: 'before', message: 'must be a stream entry id (ms-seq)' });
  return problems;
}

/**
 * Newest first, so the page an operator opens shows what just failed. With a reason filter
 * the scan goes on past non-matching records until the page is full, the DLT ends, or
 * MAX_PAGE_SCAN records were read; `next` then resumes where the scan stopped.
 */
export async function newestDeadLetters(port: RedisPort, dlt: string, query: NewestFirstQuery = {}): Promise<NewestFirstPage> {
  const problems = pageProblems(query);
  if (problems.length > 0) throw new ConfigError('dead-letter page', problems);
  const size = query.pageSize ?? DEFAULT_PAGE_SIZE;
  const records: DeadLetterRecord[] = [];
  let cursor = query.before;
  let scanned = 0;
  for (;;) {
    // One record beyond the page tells whether an older page exists.
    const batch = query.reason === undefined ? size + 1 - records.length : Math.min(MAX_PAGE_SCAN - scanned, Math.max(size + 1, 100));
    const reply = await runCommand(port, command('XREVRANGE', dlt, cursor === undefined ? '+' : `(${cursor}`, '-', 'COUNT', batch));
    const read = asArray(reply, 'XREVRANGE reply').map(parseDeadLetterRecord);
    scanned += read.length;
    for (const record of read) {
      if (query.reason === undefined || record.reason === query.reason) {
        if (records.length === size) return { records, scanned, next: records[size - 1]!.id };
        records.push(record);
      }
      cursor = record.id;
    }
    if (read.length < batch) return { records, scanned, next: undefined };
    if (scanned >= MAX_PAGE_SCAN) return { records, scanned, next: cursor };
  }
}

/** One record by its DLT id, or undefined when the DLT holds none with that id. */
export async function readDeadLetter(port: RedisPort, dlt: string, id: string): Promise<DeadLetterRecord | undefined> {
  if (!isEntryId(id)) return undefined;
  const [item] = asArray(await runCommand(port, command('XRANGE', dlt, id, id)), 'XRANGE reply');
  return item === undefined ? undefined : parseDeadLetterRecord(item);
}

/** Records among the newest `scanLimit` of a DLT that `match` accepts, newest first. */
export async function searchDeadLetters(
  port: RedisPort,
  dlt: string,
  match: (record: DeadLetterRecord) => boolean,
  scanLimit: number,
): Promise<{ records: DeadLetterRecord[]; scanned: number }> {
  const reply = await runCommand(port, command('XREVRANGE', dlt, '+', '-', 'COUNT', scanLimit));
  const read = asArray(reply, 'XREVRANGE reply').map(parseDeadLetterRecord);
  return { records: read.filter(match), scanned: read.length };
}
