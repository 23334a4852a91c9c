/**
 * Redrive from the dashboard: first a plan (what a confirmation page shows: which records,
 * and which of them redrive would refuse), then the redrive itself through createRedriver —
 * the same code and the same redrive.lua as `saga-streams dlt redrive`, so the dashboard can
 * never restore an entry differently from the CLI.
 *
 * One request redrives at most MAX_REDRIVE_PER_REQUEST records, read within a scan's byte
 * budget (an edge function has little memory and a CPU and time budget); the outcome says
 * when matching records may remain, and the operator confirms again for the rest.
 */
import type { ConsumerConfig } from '../../consume/config';
import type { RedisPort } from '../../redis/port';
import { parseDeadLetterRecord, type DeadLetterRecord, type UnrestorableReason } from '../../redrive/record';
import { createRedriver, REDRIVE_BATCH, type RedriveOutcome, type Redriver } from '../../redrive/redrive';
import { readDeadLetter, reasonOf } from './dead-letters';
import { scanStream } from './recent-entries';

export const MAX_REDRIVE_PER_REQUEST = 1_000;
/** DLT records read looking for one reason's, at most (the byte budget may stop it sooner). */
const MAX_SCANNED = 100_000;
const REDRIVE_CHUNK_BYTES = 4 * 1024 * 1024;

export type RedriveTarget = { readonly kind: 'record'; readonly id: string } | { readonly kind: 'reason'; readonly reason: string };

/** What redrive would do with one record, decided as redrive.ts's precheck does. */
export type PlannedStatus = 'redrive' | 'foreign' | 'no_original' | 'unrestorable';

export interface PlannedRecord {
  readonly record: DeadLetterRecord;
  readonly status: PlannedStatus;
  readonly unrestorable?: UnrestorableReason;
}

export interface RedrivePlan {
  readonly stream: string;
  readonly target: RedriveTarget;
  /** At most MAX_REDRIVE_PER_REQUEST records, oldest first (the order a redrive takes them). */
  readonly records: PlannedRecord[];
  /** True when more records match than one request redrives. */
  readonly more: boolean;
}

function planned(config: ConsumerConfig, record: DeadLetterRecord): PlannedRecord {
  if (record.sourceStream !== config.keys.stream) return { record, status: 'foreign' };
  if (record.unrestorable !== undefined) return { record, status: 'unrestorable', unrestorable: record.unrestorable };
  if (record.originalForm === 'none') return { record, status: 'no_original' };
  return { record, status: 'redrive' };
}

/**
 * Records of `reason`, oldest first (the order redrive restores them in), at most `limit`,
 * and at most the scan's byte budget read; `more` when the DLT may hold further ones.
 */
async function recordsOfReason(port: RedisPort, dlt: string, reason: string, limit: number): Promise<{ records: DeadLetterRecord[]; more: boolean }> {
  const records: DeadLetterRecord[] = [];
  let more = false;
  const scan = await scanStream(port, dlt, { order: 'oldest', limit: MAX_SCANNED }, (item) => {
    if (reasonOf(item) !== reason) return false;
    if (records.length === limit) return (more = true);
    records.push(parseDeadLetterRecord(item));
    return false;
  });
  return { records, more: more || scan.stoppedBy !== 'end' };
}

/** Bytes of a record's original fields: what redrive.lua appends, and what the redriver re-reads. */
function sizeOf(record: DeadLetterRecord): number {
  return record.originalFields.reduce((sum, [name, value]) => sum + name.length + value.length, 0);
}

/**
 * Hands the ids to the redriver in groups of at most REDRIVE_CHUNK_BYTES of records: it
 * re-reads every record of a call in one reply, and an edge function's memory is small.
 */
async function redriveInChunks(redriver: Redriver, records: readonly DeadLetterRecord[]): Promise<RedriveOutcome[]> {
  const outcomes: RedriveOutcome[] = [];
  let chunk: string[] = [];
  let bytes = 0;
  for (const record of records) {
    if (chunk.length > 0 && (bytes + sizeOf(record) > REDRIVE_CHUNK_BYTES || chunk.length === REDRIVE_BATCH)) {
      outcomes.push(...(await redriver.redrive(chunk)));
      chunk = [];
      bytes = 0;
    }
    chunk.push(record.id);
    bytes += sizeOf(record);
  }
  if (chunk.length > 0) outcomes.push(...(await redriver.redrive(chunk)));
  return outcomes;
}

export async function planRedrive(port: RedisPort, config: ConsumerConfig, target: RedriveTarget, limit = MAX_REDRIVE_PER_REQUEST): Promise<RedrivePlan> {
  const base = { stream: config.stream, target };
  if (target.kind === 'record') {
    const record = await readDeadLetter(port, config.keys.dlt, target.id);
    return { ...base, records: record === undefined ? [] : [planned(config, record)], more: false };
  }
  const { records, more } = await recordsOfReason(port, config.keys.dlt, target.reason, limit);
  return { ...base, records: records.map((r) => planned(config, r)), more };
}

export interface RedriveResult {
  readonly stream: string;
  readonly target: RedriveTarget;
  /** One per record attempted, in order (`missing`: already redriven or trimmed meanwhile). */
  readonly outcomes: RedriveOutcome[];
  /** True when records of the reason may remain beyond this request's limit. */
  readonly more: boolean;
}

export async function redriveTarget(port: RedisPort, config: ConsumerConfig, target: RedriveTarget, limit = MAX_REDRIVE_PER_REQUEST): Promise<RedriveResult> {
  const redriver = createRedriver({ port, config });
  const base = { stream: config.stream, target };
  if (target.kind === 'record') return { ...base, outcomes: await redriver.redrive([target.id]), more: false };
  // Read, then redrive what was read: the ids are the ones the script re-reads and checks.
  const { records, more } = await recordsOfReason(port, config.keys.dlt, target.reason, limit);
  return { ...base, outcomes: await redriveInChunks(redriver, records), more };
}
