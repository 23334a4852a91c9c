/**
 * Redrive from the dashboard: first a plan (what a confirmation page shows: which records,
 * and which of them redrive would refuse), then the redrive itself through createRedriver —
 * the same code and the same redrive.lua as `saga-streams dlt redrive`, so the dashboard can
 * never restore an entry differently from the CLI.
 *
 * One request redrives at most MAX_REDRIVE_PER_REQUEST records (an edge function has a CPU
 * and time budget); the outcome says how many matching records may remain, and the operator
 * confirms again for the rest.
 */
import type { ConsumerConfig } from '../../config';
import type { RedisPort } from '../../redis/port';
import { listDeadLetters } from '../../redrive/list';
import type { DeadLetterRecord, UnrestorableReason } from '../../redrive/record';
import { createRedriver, type RedriveOutcome } from '../../redrive/redrive';
import { readDeadLetter } from './dead-letters';

export const MAX_REDRIVE_PER_REQUEST = 1_000;
const SCAN_PAGE = 1_000;

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

/** Records of `reason`, oldest first, at most `limit`; `more` when the DLT holds further ones. */
async function recordsOfReason(port: RedisPort, dlt: string, reason: string, limit: number): Promise<{ records: DeadLetterRecord[]; more: boolean }> {
  const records: DeadLetterRecord[] = [];
  let after: string | undefined;
  do {
    const page = await listDeadLetters(port, dlt, { reasons: [reason], after, scanLimit: SCAN_PAGE });
    records.push(...page.records);
    after = page.next;
  } while (after !== undefined && records.length <= limit);
  return { records: records.slice(0, limit), more: records.length > limit || after !== undefined };
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
  return { ...base, outcomes: await redriver.redrive(records.map((r) => r.id)), more };
}
