/**
 * Listing dead-letter records with filters by reason and age, one page per call. Age is
 * read from the DLT entry id (the Redis time the record was written), so the age bounds
 * become the XRANGE bounds and only the reason filter runs here.
 */
import { entryIdMillis } from '../entry/entry';
import { ConfigError, type ConfigProblem } from '../ground/errors';
import { command, type RedisPort } from '../redis/port';
import { asArray } from '../redis/reply';
import { runCommand } from '../redis/script';
import { parseDeadLetterRecord, type DeadLetterRecord } from './record';

export const DEFAULT_SCAN_LIMIT = 100;
export const MAX_SCAN_LIMIT = 10_000;

export interface DeadLetterQuery {
  /** Keep only records with one of these reasons. */
  readonly reasons?: readonly string[];
  /** Only records dead-lettered at least this many ms ago. */
  readonly olderThanMs?: number;
  /** Only records dead-lettered at most this many ms ago. */
  readonly newerThanMs?: number;
  /** Resume after this DLT id (exclusive): the `next` of the previous page. */
  readonly after?: string;
  /** DLT entries scanned by this call (before the reason filter); default 100. */
  readonly scanLimit?: number;
  /** Clock for the age bounds; default Date.now. */
  readonly now?: () => number;
}

export interface DeadLetterPage {
  readonly records: DeadLetterRecord[];
  /** Pass as `after` to continue; undefined when the scan reached the end of the range. */
  readonly next: string | undefined;
}

const ENTRY_ID = /^\d+-\d+$/;

function queryProblems(query: DeadLetterQuery): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const limit = query.scanLimit ?? DEFAULT_SCAN_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SCAN_LIMIT) problems.push({ path: 'scanLimit', message: `must be an integer in 1..=${MAX_SCAN_LIMIT}` });
  for (const field of ['olderThanMs', 'newerThanMs'] as const) {
    const value = query[field];
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) problems.push({ path: field, message: 'must be a non-negative integer' });
  }
  if (query.after !== undefined && !ENTRY_ID.test(query.after)) problems.push({ path: 'after', message: 'must be a stream entry id (ms-seq)' });
  return problems;
}

export async function listDeadLetters(port: RedisPort, dlt: string, query: DeadLetterQuery = {}): Promise<DeadLetterPage> {
  const problems = queryProblems(query);
  if (problems.length > 0) throw new ConfigError('dead-letter query', problems);
  const now = (query.now ?? Date.now)();
  const limit = query.scanLimit ?? DEFAULT_SCAN_LIMIT;
  const newestMs = query.olderThanMs === undefined ? undefined : now - query.olderThanMs;
  const oldestMs = query.newerThanMs === undefined ? undefined : Math.max(0, now - query.newerThanMs);
  if (newestMs !== undefined && newestMs < 0) return { records: [], next: undefined };

  // An end bound of only milliseconds is inclusive of every sequence number in that ms.
  const start = query.after !== undefined ? `(${query.after}` : oldestMs !== undefined ? `${oldestMs}` : '-';
  const end = newestMs !== undefined ? `${newestMs}` : '+';
  const reply = await runCommand(port, command('XRANGE', dlt, start, end, 'COUNT', limit));
  const scanned = asArray(reply, 'XRANGE reply').map(parseDeadLetterRecord);
  const reasons = query.reasons === undefined ? undefined : new Set(query.reasons);
  const records = scanned.filter(
    (r) => (reasons === undefined || reasons.has(r.reason)) && (oldestMs === undefined || (entryIdMillis(r.id) ?? 0) >= oldestMs),
  );
  return { records, next: scanned.length === limit ? scanned[scanned.length - 1]!.id : undefined };
}
