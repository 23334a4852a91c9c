/**
 * Redrive (SPEC §7): move chosen dead-letter records back to their source stream,
 * byte-for-byte, clearing their markers — one atomic redrive.lua call per batch.
 *
 * What happens to a record: it is deleted from the DLT in the same script that re-appends
 * the entry and deletes the marker. The re-appended entry is the evidence from then on; if
 * it fails again it is dead-lettered again under a new record. Deleting (rather than
 * keeping a "redriven" copy — stream entries cannot be edited in place) makes redrive
 * at-most-once per record: redriving the same id twice finds nothing the second time.
 *
 * Two round trips per batch: the records are read first because their marker keys derive
 * from the record's `group` and `source_entry_id` (markerKeyFor, the rule settle uses) and
 * every key a script touches must be passed in KEYS. Entries are immutable, so what was read
 * cannot change before the script runs; a record deleted meanwhile is reported `missing`.
 * The marker prefix is this config's (`keys.markerPrefix`); the group is the record's, so a
 * redriver built for any group of the stream clears the marker of the group that rejected.
 */
import type { ConsumerConfig } from '../consume/config';
import { ReplyShapeError } from '../ground/errors';
import { redriveScript } from '../generated/lua-scripts';
import { markerKeyFor } from '../entry/marker-key';
import { assertSingleSlot } from '../entry/assert-single-slot';
import { command, type RedisPort, type RedisReply } from '../redis/port';
import { asArray, asText } from '../redis/reply';
import { runOperations, runScript } from '../redis/script';
import { sizeKeys } from '../entry/size-keys';
import { listDeadLetters, type DeadLetterPage, type DeadLetterQuery } from './list';
import { parseDeadLetterRecord, type DeadLetterRecord, type UnrestorableReason } from './record';

/** Records per redrive.lua call: bounds the script's run time and its KEYS list. */
export const REDRIVE_BATCH = 500;

/**
 * `redriven`: re-appended as `entryId`, marker and record deleted. `missing`: no such record
 * (already redriven, trimmed, or not an entry id). `foreign`: the record names another
 * source stream. `no_original`: the record holds no original fields to restore.
 * `unrestorable`: the record's original cannot be restored exactly (`reason` says why);
 * nothing is appended, and the record and its marker are kept as the evidence.
 */
export type RedriveStatus = 'redriven' | 'missing' | 'foreign' | 'no_original' | 'unrestorable';

export interface RedriveOutcome {
  /** The DLT record id asked for. */
  readonly id: string;
  readonly status: RedriveStatus;
  /** The new source entry id, when redriven. */
  readonly entryId?: string;
  /** Why, when `unrestorable`. */
  readonly reason?: UnrestorableReason;
}

export interface Redriver {
  list(query?: DeadLetterQuery): Promise<DeadLetterPage>;
  /** Redrives the records in order; batches of REDRIVE_BATCH are each atomic. */
  redrive(ids: readonly string[]): Promise<RedriveOutcome[]>;
}

export interface RedriverOptions {
  readonly port: RedisPort;
  /** The consumer config whose DLT and markers are redriven (e.g. `parseConsumerConfig(input)`). */
  readonly config: ConsumerConfig;
}

const ENTRY_ID = /^\d+-\d+$/;
const STATUSES: readonly string[] = ['redriven', 'missing', 'foreign', 'no_original', 'unrestorable'] satisfies RedriveStatus[];
const REASONS: readonly string[] = ['packed_unreadable', 'ambiguous_original', 'fields_omitted', 'too_wide'] satisfies UnrestorableReason[];

export function createRedriver({ port, config }: RedriverOptions): Redriver {
  if (port.cluster) assertSingleSlot(config.keys);
  return {
    list: (query) => listDeadLetters(port, config.keys.dlt, query),
    async redrive(ids) {
      const outcomes: RedriveOutcome[] = [];
      for (let i = 0; i < ids.length; i += REDRIVE_BATCH) {
        outcomes.push(...(await redriveBatch(port, config, ids.slice(i, i + REDRIVE_BATCH))));
      }
      return outcomes;
    },
  };
}

async function readRecords(port: RedisPort, dlt: string, ids: readonly string[]): Promise<Array<DeadLetterRecord | undefined>> {
  const replies = await runOperations(port, ids.map((id) => command('XRANGE', dlt, id, id)));
  return replies.map((reply) => {
    const [item] = asArray(reply, 'XRANGE reply');
    return item === undefined ? undefined : parseDeadLetterRecord(item);
  });
}

/** Why a record cannot be redriven, decided without touching Redis again; undefined = send it to the script. */
function precheck(id: string, config: ConsumerConfig, record: DeadLetterRecord | undefined): RedriveOutcome | undefined {
  if (record === undefined) return { id, status: 'missing' };
  if (record.sourceStream !== config.keys.stream) return { id, status: 'foreign' };
  if (record.unrestorable !== undefined) return { id, status: 'unrestorable', reason: record.unrestorable };
  if (record.originalForm === 'none') return { id, status: 'no_original' };
  return undefined;
}

async function redriveBatch(port: RedisPort, config: ConsumerConfig, ids: readonly string[]): Promise<RedriveOutcome[]> {
  const wellFormed = ids.filter((id) => ENTRY_ID.test(id));
  const records = wellFormed.length === 0 ? [] : await readRecords(port, config.keys.dlt, wellFormed);
  const byId = new Map(wellFormed.map((id, i) => [id, records[i]]));

  const outcomes: RedriveOutcome[] = [];
  const chosen: Array<{ index: number; record: DeadLetterRecord }> = [];
  ids.forEach((id, index) => {
    const record = byId.get(id);
    const refused = precheck(id, config, record);
    if (refused === undefined) chosen.push({ index, record: record! });
    outcomes.push(refused ?? { id, status: 'missing' });
  });
  if (chosen.length === 0) return outcomes;

  const reply = await runScript(port, {
    script: redriveScript,
    keys: [
      config.keys.stream,
      config.keys.dlt,
      sizeKeys(config.keys.stream).counts,
      sizeKeys(config.keys.stream).large,
      ...chosen.map(({ record }) => markerKeyFor(config.keys, record.group, record.sourceEntryId)),
    ],
    args: chosen.map(({ record }) => record.id),
  });
  asArray(reply, 'redrive reply').forEach((item, j) => {
    const { index } = chosen[j]!;
    outcomes[index] = scriptOutcome(ids[index]!, item);
  });
  return outcomes;
}

function scriptOutcome(id: string, item: RedisReply): RedriveOutcome {
  const [status, entryId, detail] = asArray(item, 'redrive outcome');
  const statusText = asText(status, 'redrive status');
  if (!STATUSES.includes(statusText)) throw new ReplyShapeError('redrive status');
  const newId = asText(entryId, 'redriven entry id');
  const reason = asText(detail, 'redrive detail');
  if (statusText === 'unrestorable') {
    if (!REASONS.includes(reason)) throw new ReplyShapeError('redrive detail');
    return { id, status: 'unrestorable', reason: reason as UnrestorableReason };
  }
  return newId === '' ? { id, status: statusText as RedriveStatus } : { id, status: statusText as RedriveStatus, entryId: newId };
}
