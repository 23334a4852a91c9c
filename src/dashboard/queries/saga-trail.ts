/**
 * The saga view (issue 17 §1): one saga instance's commands and results in order, across
 * every stream of the deployment, each with its state per consumer group (entry-state.ts).
 *
 * Nothing indexes entries by instance: the instance id lives in the JSON payload
 * (`instance_id`, SPEC §9). So this is a bounded scan — the newest `scanLimit` entries of
 * each stream and of each DLT (a dead-lettered entry may be trimmed from its stream while
 * its record keeps the original). The result says how many entries were scanned, so an
 * instance older than the window reads as "not within the newest N", not as absent.
 *
 * Order: by entry id. Every id comes from the one Redis clock, so ids of different streams
 * sort in the order the entries were appended — except that two streams may each give an
 * entry the same id (same millisecond, sequence 0); such ties go by the envelope's own
 * time (issued_at / completed_at), then by the order the deployment declares its streams.
 */
import type { DeploymentConfig } from '../../deployment/define-config';
import { Fields } from '../../entry/entry';
import { command, type RedisPort } from '../../redis/port';
import { asArray } from '../../redis/reply';
import { runOperations, runOperationsSettled } from '../../redis/script';
import type { DeadLetterRecord } from '../../redrive/record';
import { searchDeadLetters } from './dead-letters';
import { decodeText, exactUtf8Text } from '../../ground/text';
import { compareEntryIds, entryStates, groupCursors, type GroupState } from './entry-state';
import { DEFAULT_SCAN_LIMIT, eventIdOf, instanceIdOf, parseEntry, scanStream, type SearchedStream } from './recent-entries';
import { declaredStreams, type DeclaredStream } from './streams';

export interface SagaStep {
  readonly stream: string;
  readonly entryId: string;
  /** False when only a DLT record still holds the entry. */
  readonly inStream: boolean;
  readonly kind: 'command' | 'result' | 'other';
  readonly event: string | undefined;
  readonly eventId: string | undefined;
  readonly step: string | undefined;
  readonly action: string | undefined;
  /** A result's `outcome` (succeeded / failed) and its error code, if any. */
  readonly outcome: string | undefined;
  readonly errorCode: string | undefined;
  /** `issued_at` of a command, `completed_at` of a result. */
  readonly at: string | undefined;
  readonly groups: GroupState[];
  /** Records of this entry found in `dlt` (one per group that dead-lettered it). */
  readonly deadLetters: DeadLetterRecord[];
  readonly dlt: string;
}

export interface SagaTrail {
  readonly instanceId: string;
  readonly scanLimit: number;
  readonly steps: SagaStep[];
  readonly searched: SearchedStream[];
}

interface Envelope {
  command_id?: unknown;
  result_id?: unknown;
  step?: unknown;
  action?: unknown;
  outcome?: unknown;
  error?: { code?: unknown } | null;
  issued_at?: unknown;
  completed_at?: unknown;
}

const textOr = (value: unknown) => (typeof value === 'string' ? value : undefined);

function describe(fields: ReadonlyMap<string, Uint8Array>): Pick<SagaStep, 'kind' | 'event' | 'eventId' | 'step' | 'action' | 'outcome' | 'errorCode' | 'at'> {
  const payload = fields.get(Fields.payload);
  let envelope: Envelope = {};
  try {
    envelope = (JSON.parse(exactUtf8Text(payload ?? new Uint8Array()) ?? '') as Envelope | null) ?? {};
  } catch {
    // instanceIdOf parsed it already; a payload that stopped parsing shows as "other".
  }
  const kind = typeof envelope.command_id === 'string' ? 'command' : typeof envelope.result_id === 'string' ? 'result' : 'other';
  const event = fields.get(Fields.event);
  return {
    kind,
    event: event === undefined ? undefined : decodeText(event),
    eventId: eventIdOf(fields),
    step: textOr(envelope.step),
    action: textOr(envelope.action),
    outcome: textOr(envelope.outcome),
    errorCode: textOr(envelope.error?.code),
    at: textOr(kind === 'command' ? envelope.issued_at : envelope.completed_at),
  };
}

async function trailOfStream(port: RedisPort, target: DeclaredStream, instanceId: string, scanLimit: number) {
  const { stream, keys } = target;
  const [groupsReply] = await runOperationsSettled(port, [command('XINFO', 'GROUPS', stream)]);
  const found = new Map<string, { fields: ReadonlyMap<string, Uint8Array>; inStream: boolean }>();
  const scan = await scanStream(port, stream, { limit: scanLimit }, (item, id) => {
    const entry = parseEntry(item);
    if (instanceIdOf(entry.fields, instanceId) === instanceId) found.set(id, { fields: entry.fields, inStream: true });
  });
  const dltScan = await searchDeadLetters(port, keys.dlt, (r) => r.sourceStream === stream && instanceIdOf(r.original, instanceId) === instanceId, scanLimit);
  const records = dltScan.records;
  // A record whose source is older than the scan: is the entry still in the stream?
  const beyond = [...new Set(records.map((r) => r.sourceEntryId))].filter((id) => !found.has(id));
  const present = beyond.length === 0 ? [] : await runOperations(port, beyond.map((id) => command('XRANGE', stream, id, id)));
  beyond.forEach((id, i) => {
    const record = records.find((r) => r.sourceEntryId === id)!;
    found.set(id, { fields: record.original, inStream: asArray(present[i], 'XRANGE reply').length > 0 });
  });
  const ids = [...found.keys()];
  const states = await entryStates(port, keys, groupCursors(groupsReply!), ids, records);
  const steps = ids.map((id): SagaStep => {
    const { fields, inStream } = found.get(id)!;
    return { stream, entryId: id, inStream, ...describe(fields), groups: states.get(id) ?? [], deadLetters: records.filter((r) => r.sourceEntryId === id), dlt: keys.dlt };
  });
  return { steps, searched: { stream, scanned: scan.scanned, scanStoppedBy: scan.stoppedBy, dltScanned: dltScan.scan.scanned, dltScanStoppedBy: dltScan.scan.stoppedBy } };
}

export async function sagaTrail(port: RedisPort, config: DeploymentConfig, instanceId: string, options: { scanLimit?: number } = {}): Promise<SagaTrail> {
  const scanLimit = options.scanLimit ?? DEFAULT_SCAN_LIMIT;
  const perStream = await Promise.all(declaredStreams(config).map((target) => trailOfStream(port, target, instanceId, scanLimit)));
  return {
    instanceId,
    scanLimit,
    steps: perStream.flatMap((s) => s.steps).sort((a, b) => compareEntryIds(a.entryId, b.entryId) || (a.at ?? '').localeCompare(b.at ?? '')),
    searched: perStream.map((s) => s.searched),
  };
}
