/**
 * The DLT browser's reads: reason counts, newest-first pages, one record. Pure reads; the
 * records are parsed by src/redrive/record.ts, so what the dashboard shows is exactly what
 * a redrive would restore (packed originals decoded, unrestorable ones flagged).
 *
 * Counting reasons means reading records, and a record holds the whole original entry: the
 * count covers the newest `countLimit` records only (fewer when they are large: the scan's
 * byte budget), and says so (`counted` < `length`).
 */
import { ConfigError } from '../../ground/errors';
import { command, type RedisPort, type RedisReply } from '../../redis/port';
import { decodeText } from '../../ground/text';
import { asArray, asInteger, isBytes } from '../../redis/reply';
import { runCommand } from '../../redis/script';
import { DeadLetterFields, parseDeadLetterRecord, type DeadLetterRecord } from '../../redrive/record';
import { scanStream, type ScanReport } from './recent-entries';

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

/** The `reason` field of a raw DLT item, without parsing (or unpacking) the rest. */
export function reasonOf(item: RedisReply): string {
  const flat = asArray(asArray(item, 'DLT entry')[1], 'DLT entry fields');
  for (let i = 0; i + 1 < flat.length; i += 2) {
    if (isBytes(flat[i]) && decodeText(flat[i] as Uint8Array) === DeadLetterFields.reason && isBytes(flat[i + 1])) return decodeText(flat[i + 1] as Uint8Array);
  }
  return '';
}

export async function summarizeDeadLetters(port: RedisPort, dlt: string, countLimit = DEFAULT_COUNT_LIMIT): Promise<DeadLetterSummary> {
  const length = asInteger(await runCommand(port, command('XLEN', dlt)), 'XLEN reply');
  const counts = new Map<string, number>();
  const { scanned } = await scanStream(port, dlt, { limit: countLimit }, (item) => {
    const reason = reasonOf(item);
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  });
  const reasons = [...counts].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  return { dlt, length, counted: scanned, reasons };
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
  let full = false;
  const report = await scanStream(port, dlt, { limit: query.reason === undefined ? size + 1 : MAX_PAGE_SCAN, resumeAfter: query.before }, (item) => {
    const record = parseDeadLetterRecord(item);
    if (query.reason !== undefined && record.reason !== query.reason) return false;
    // One matching record beyond the page tells that an older page exists.
    if (records.length === size) return (full = true);
    records.push(record);
    return false;
  });
  const next = full ? records[size - 1]!.id : report.stoppedBy === 'end' || (query.reason === undefined && report.stoppedBy === 'limit') ? undefined : report.last;
  return { records, scanned: report.scanned, next };
}

/** One record by its DLT id, or undefined when the DLT holds none with that id. */
export async function readDeadLetter(port: RedisPort, dlt: string, id: string): Promise<DeadLetterRecord | undefined> {
  if (!isEntryId(id)) return undefined;
  const [item] = asArray(await runCommand(port, command('XRANGE', dlt, id, id)), 'XRANGE reply');
  return item === undefined ? undefined : parseDeadLetterRecord(item);
}

/** Records among the newest `scanLimit` of a DLT (and within the scan's byte budget) that `match` accepts, newest first. */
export async function searchDeadLetters(
  port: RedisPort,
  dlt: string,
  match: (record: DeadLetterRecord) => boolean,
  scanLimit: number,
): Promise<{ records: DeadLetterRecord[]; scan: ScanReport }> {
  const records: DeadLetterRecord[] = [];
  const scan = await scanStream(port, dlt, { limit: scanLimit }, (item) => {
    const record = parseDeadLetterRecord(item);
    if (match(record)) records.push(record);
  });
  return { records, scan };
}
