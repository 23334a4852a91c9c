/**
 * The invariant checker: a history of what was published (by entry id), what every
 * handler committed (the ledgers) and what Redis holds, checked live against atomic
 * snapshots of the group state and at the end.
 *
 * The race that makes I2 sound: a handler's commit is durable in its ledger before the
 * handler returns, and the ack comes after that. A snapshot therefore reads Redis FIRST
 * (one MULTI: every group's last-delivered id and PEL, the new DLT records, the stream's
 * first id) and the ledgers AFTER it: every ack the snapshot saw has its commit in the
 * ledger by the time the ledger is read. Only entries whose XADD was confirmed before the
 * snapshot started are judged by it.
 */
import type { Cluster, Redis } from 'ioredis';
import type { EarlyAckLine, RunLine, StartLine } from './child-config';
import { compareIds, idKey } from './ids';
import type { InboxState } from './inbox';
import { LedgerReader } from './ledger';
import { packedPairs } from './msgpack';

/**
 * I1-I6 as issue 13 names them; I7: effects exactly once through the Postgres inbox (scenario
 * 8); I8: scheduled events appended at most once, never before due, never lost (scheduled.ts);
 * I9: never more handlers of one flow key in flight than its group's limit (flow-check.ts);
 * I10: under strict order, a key's entry never starts before every earlier one committed.
 */
export type Invariant = 'I1' | 'I2' | 'I3' | 'I4' | 'I5' | 'I6' | 'I7' | 'I8' | 'I9' | 'I10';
export const INVARIANTS: readonly Invariant[] = ['I1', 'I2', 'I3', 'I4', 'I5', 'I6', 'I7', 'I8', 'I9', 'I10'];

export interface Violation {
  readonly invariant: Invariant;
  readonly detail: string;
}

export interface KnownEntry {
  readonly id: string;
  readonly eventId: string;
  /** `normal`: must be committed by every group; `dead-letter`: must be dead-lettered once per group. */
  readonly kind: 'normal' | 'dead-letter';
  readonly label: string;
  /** Acceptable dead-letter reasons (dead-letter entries only). */
  readonly reasons?: readonly string[];
  /** The original field/value pairs as appended (dead-letter entries only), for byte-exact evidence. */
  readonly fields?: readonly Buffer[];
}

interface GroupState {
  readonly lastDelivered: string;
  readonly pending: Set<string>;
}

export interface Snapshot {
  readonly at: number;
  readonly groups: Map<string, GroupState>;
  /** The stream's first id, or undefined when the stream is empty. */
  readonly firstId: string | undefined;
}

const FIRST_ID_SCRIPT = "local r = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1) if r[1] then return r[1][1] end return false";
const MAX_DETAILS_PER_INVARIANT = 25;
/** I6: every run ends by its deadline + this, in every scenario, reported or not. */
export const DEADLINE_GRACE_MS = 1_000;

type Admin = Redis | Cluster;

export class History {
  readonly known = new Map<string, KnownEntry>();
  readonly #order: KnownEntry[] = [];
  /** idKey of each entry in #order, computed once (snapshots compare every entry). */
  readonly #orderKeys: string[] = [];
  readonly #ledger: LedgerReader;
  /** group → entry id → commits */
  readonly commits = new Map<string, Map<string, number>>();
  /** group → event id → commits (an event may have been appended twice by a retried publish) */
  readonly eventCommits = new Map<string, Map<string, number>>();
  /** `${group} ${entryId}` → DLT records seen */
  readonly dltCount = new Map<string, number>();
  dltRecords = 0;
  #lastDltId = '0-0';
  readonly #violationKeys = new Set<string>();
  readonly violations: Violation[] = [];
  readonly violationCounts: Record<Invariant, number> = { I1: 0, I2: 0, I3: 0, I4: 0, I5: 0, I6: 0, I7: 0, I8: 0, I9: 0, I10: 0 };
  readonly #openRuns = new Map<number, StartLine>();
  worstOvershootMs = Number.NEGATIVE_INFINITY;
  runs = 0;
  runErrors = 0;
  snapshots = 0;
  /** Entries a handler held that Redis no longer counted as delivered (its last-delivered id fell back). */
  forgottenDeliveries = 0;
  /** Entries a handler found acked under it, by another consumer that had committed them (a late ack). */
  lateAcksOfCommitted = 0;

  constructor(
    readonly stream: string,
    readonly dlt: string,
    readonly groups: readonly string[],
    ledgerDir: string,
  ) {
    this.#ledger = new LedgerReader(ledgerDir);
    for (const group of groups) {
      this.commits.set(group, new Map());
      this.eventCommits.set(group, new Map());
    }
  }

  violate(invariant: Invariant, key: string, detail: string): void {
    if (this.#violationKeys.has(`${invariant} ${key}`)) return;
    this.#violationKeys.add(`${invariant} ${key}`);
    this.violationCounts[invariant] += 1;
    if (this.violationCounts[invariant] <= MAX_DETAILS_PER_INVARIANT) this.violations.push({ invariant, detail });
  }

  get violationTotal(): number {
    return INVARIANTS.reduce((sum, i) => sum + this.violationCounts[i], 0);
  }

  add(entry: KnownEntry): void {
    this.known.set(entry.id, entry);
    this.#order.push(entry);
    this.#orderKeys.push(idKey(entry.id));
  }

  get publishedCount(): number {
    return this.#order.length;
  }

  // ---- I6: run deadlines, from the children's START/RUN lines ----
  // One bound for every run: it ends no later than its deadline + DEADLINE_GRACE_MS. A run
  // that reports is judged by its RUN line's end; a run that never reports, when its process
  // is gone (killed by a fault or by the harness at the end, or dead on its own): all of a
  // process's lines have been read by then, so a run still open had not ended at that moment.

  readonly #startedPids = new Set<number>();

  get startedPids(): number {
    return this.#startedPids.size;
  }

  runStarted(line: StartLine): void {
    this.#startedPids.add(line.pid);
    this.#openRuns.set(line.pid, line);
  }

  runEnded(line: RunLine): void {
    this.#openRuns.delete(line.pid);
    this.runs += 1;
    if (line.error) this.runErrors += 1;
    const overshoot = line.endedAt - line.deadline;
    this.worstOvershootMs = Math.max(this.worstOvershootMs, overshoot);
    if (overshoot > DEADLINE_GRACE_MS) {
      this.violate('I6', `run ${line.pid} ${line.startedAt}`, `run of ${line.consumer} (pid ${line.pid}) ended ${overshoot} ms after its deadline (bound ${DEADLINE_GRACE_MS} ms)${line.error ? ` (error ${line.error})` : ''}`);
    }
    if ((line.deletedPending ?? 0) > 0) {
      this.violate('I5', `deleted ${line.pid} ${line.startedAt}`, `run of ${line.consumer} found ${line.deletedPending} pending entries deleted before anyone acked them`);
    }
  }

  /**
   * A process is gone at `at` (epoch ms: when it was killed, or when it exited) and every
   * line it wrote has been read. A run still open then never ended: before its deadline +
   * grace that is a run cut short by the fault; after it, a run that overshot by at least
   * the time it was still running.
   */
  processGone(pid: number | undefined, at: number): void {
    if (pid === undefined) return;
    const line = this.#openRuns.get(pid);
    this.#openRuns.delete(pid);
    if (!line) return;
    const overshoot = at - line.deadline;
    if (overshoot <= DEADLINE_GRACE_MS) return;
    this.worstOvershootMs = Math.max(this.worstOvershootMs, overshoot);
    this.violate('I6', `run ${line.pid} ${line.startedAt}`, `run of pid ${line.pid} never reported its end: still running ${overshoot} ms after its deadline when its process ended (bound ${DEADLINE_GRACE_MS} ms)`);
  }

  // ---- I2: the handlers' direct probe ----

  /**
   * A handler, inside its time limit and before its commit, found its entry gone from the
   * PEL (chaos/probe.ts). Someone acked it; that is I2 only if no ledger holds the entry's
   * commit for this group. The ledgers are read now, after the probe read the PEL (the
   * snapshot rule of this file's header): an ack the probe saw had its commit written
   * before it was sent. A commit found is another consumer's (or an earlier delivery's)
   * whose ack arrived late — a stalled connection held it past minIdle, and this handler
   * had reclaimed the entry meanwhile. At-least-once, not an ack before commit.
   */
  earlyAck(line: EarlyAckLine): 'forgotten' | 'late-ack' | 'violation' {
    if (line.lastDelivered !== undefined && compareIds(line.entryId, line.lastDelivered) > 0) {
      // Not an ack: the group's last-delivered id fell back below an entry Redis had
      // handed out (a Redis restart lost the delivery). Reported, not blamed on the product.
      this.forgottenDeliveries += 1;
      return 'forgotten';
    }
    this.readLedgers();
    if (this.commits.get(line.group)?.has(line.entryId)) {
      this.lateAcksOfCommitted += 1;
      return 'late-ack';
    }
    this.violate('I2', `early ${line.group} ${line.entryId}`, `entry ${line.entryId} left ${line.group}'s PEL while its handler (pid ${line.pid}) was still inside its time limit, and no ledger holds its commit (last-delivered ${line.lastDelivered ?? '?'})`);
    return 'violation';
  }

  // ---- the ledgers ----

  readLedgers(): void {
    for (const commit of this.#ledger.readNew()) {
      const perEntry = this.commits.get(commit.group);
      if (!perEntry) continue;
      perEntry.set(commit.entryId, (perEntry.get(commit.entryId) ?? 0) + 1);
      const perEvent = this.eventCommits.get(commit.group)!;
      perEvent.set(commit.eventId, (perEvent.get(commit.eventId) ?? 0) + 1);
      const known = this.known.get(commit.entryId);
      if (known?.kind === 'dead-letter') {
        this.violate('I4', `committed ${commit.group} ${commit.entryId}`, `poison ${known.label} (${commit.entryId}) was handled and committed by ${commit.group} instead of dead-lettered (${known.reasons?.join('|')})`);
      }
    }
  }

  // ---- snapshots ----

  async snapshot(admin: Admin): Promise<Snapshot> {
    const multi = admin.multi();
    multi.xinfo('GROUPS', this.stream);
    for (const group of this.groups) multi.xpending(this.stream, group, '-', '+', 1_000_000);
    multi.xrangeBuffer(this.dlt, `(${this.#lastDltId}`, '+');
    multi.eval(FIRST_ID_SCRIPT, 1, this.stream);
    const replies = await multi.exec();
    if (!replies) throw new Error('snapshot transaction discarded');
    for (const [error] of replies) if (error) throw error;
    const values = replies.map(([, value]) => value);
    const groups = new Map<string, GroupState>();
    for (const info of values[0] as unknown[][]) {
      const flat = info.map(String);
      const field = (name: string) => flat[flat.indexOf(name) + 1]!;
      groups.set(field('name'), { lastDelivered: field('last-delivered-id'), pending: new Set() });
    }
    this.groups.forEach((group, i) => {
      const rows = values[1 + i] as Array<[string, string, number, number]>;
      const state = groups.get(group);
      if (state) for (const [id] of rows) state.pending.add(id);
    });
    const dltEntries = values[1 + this.groups.length] as Array<[Buffer, Buffer[]]>;
    const firstId = values[2 + this.groups.length];
    for (const [id, flat] of dltEntries) {
      this.#lastDltId = id.toString();
      this.#checkDeadLetter(flat);
    }
    this.snapshots += 1;
    return { at: Date.now(), groups, firstId: firstId == null ? undefined : String(firstId) };
  }

  #checkDeadLetter(flat: Buffer[]): void {
    const record = new Map<string, Buffer>();
    const originals: Buffer[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const name = flat[i]!.toString('latin1');
      if (name.startsWith('orig_')) originals.push(flat[i]!.subarray(5), flat[i + 1]!);
      else record.set(name, flat[i + 1]!);
    }
    const entryId = record.get('source_entry_id')?.toString();
    const known = entryId === undefined ? undefined : this.known.get(entryId);
    if (!known) return; // not ours (e.g. an aged record planted for DLT retention)
    this.dltRecords += 1;
    const group = record.get('group')?.toString() ?? '';
    const reason = record.get('reason')?.toString() ?? '';
    if (known.kind === 'normal') {
      this.violate('I3', `dlt ${group} ${entryId}`, `entry ${entryId} (${known.label}) was dead-lettered by ${group || 'a group'} as ${reason}: transient failures must stay pending`);
      return;
    }
    const key = `${group} ${entryId}`;
    const count = (this.dltCount.get(key) ?? 0) + 1;
    this.dltCount.set(key, count);
    if (!this.groups.includes(group)) this.violate('I4', `group ${key}`, `DLT record for ${known.label} (${entryId}) names group ${JSON.stringify(group)}`);
    if (count > 1) this.violate('I4', `twice ${key}`, `${known.label} (${entryId}) has ${count} DLT records for group ${group}`);
    if (known.reasons && !known.reasons.includes(reason)) {
      this.violate('I4', `reason ${key}`, `${known.label} (${entryId}) dead-lettered by ${group} as ${reason}, expected ${known.reasons.join('|')}`);
    }
    // An entry too wide to copy field by field is kept whole in packed_original (SPEC §3.3).
    const packed = record.get('packed_original');
    const evidence = packed && originals.length === 0 ? packedPairs(packed) : originals;
    if (!sameBytes(evidence, known.fields)) {
      const omitted = originals.some((b, i) => i % 2 === 0 && b.toString() === 'omitted_fields');
      this.violate('I4', `fields ${key}`, `${known.label} (${entryId}): the DLT record of ${group} does not hold the original fields byte-exact${omitted ? ' (only orig_omitted_fields)' : ''}`);
    }
  }

  /** Live and final judgement of one snapshot against the ledgers read after it. */
  judge(snapshot: Snapshot, knownBefore: number): void {
    this.readLedgers();
    const first = snapshot.firstId === undefined ? undefined : idKey(snapshot.firstId);
    for (const group of this.groups) {
      const state = snapshot.groups.get(group);
      if (!state) {
        this.violate('I1', `group ${group}`, `group ${group} is gone from the stream`);
        continue;
      }
      const last = idKey(state.lastDelivered);
      const commits = this.commits.get(group)!;
      for (let i = 0; i < knownBefore; i += 1) {
        const entry = this.#order[i]!;
        const key = this.#orderKeys[i]!;
        const delivered = key <= last;
        const pending = state.pending.has(entry.id);
        const removed = first === undefined || key < first;
        if (removed && (!delivered || pending)) {
          this.violate('I5', `trim ${group} ${entry.id}`, `entry ${entry.id} was removed from the stream while ${group} had ${delivered ? 'it pending (delivered, not acked)' : 'not yet read it'}`);
        }
        if (!delivered || pending) continue;
        // Acked (or dropped from the PEL): it must have been committed, or dead-lettered.
        if (entry.kind === 'normal') {
          if (!commits.has(entry.id)) this.violate('I2', `ack ${group} ${entry.id}`, `entry ${entry.id} (${entry.label}) left ${group}'s PEL with no commit in the ledger`);
        } else if (!this.dltCount.has(`${group} ${entry.id}`) && !commits.has(entry.id)) {
          this.violate('I4', `record ${group} ${entry.id}`, `poison ${entry.label} (${entry.id}) left ${group}'s PEL with no DLT record for ${group}`);
        }
      }
    }
  }

  /** Counts per group of what is resolved and what still waits; I1 at the end. */
  settle(snapshot: Snapshot, final: boolean): { pending: number; unresolved: number } {
    let pending = 0;
    let unresolved = 0;
    const first = snapshot.firstId === undefined ? undefined : idKey(snapshot.firstId);
    for (const group of this.groups) {
      const state = snapshot.groups.get(group);
      const last = state ? idKey(state.lastDelivered) : '';
      const events = this.eventCommits.get(group)!;
      for (const [i, entry] of this.#order.entries()) {
        const resolved = entry.kind === 'normal' ? events.has(entry.eventId) : this.dltCount.has(`${group} ${entry.id}`);
        if (resolved) continue;
        unresolved += 1;
        const key = this.#orderKeys[i]!;
        const waiting = state !== undefined && (state.pending.has(entry.id) || (key > last && first !== undefined && key >= first));
        if (waiting) pending += 1;
        else if (final) {
          const invariant = entry.kind === 'normal' ? 'I1' : 'I4';
          this.violate(invariant, `lost ${group} ${entry.id}`, `${entry.label} ${entry.id} (event ${entry.eventId}) is neither ${entry.kind === 'normal' ? 'committed' : 'dead-lettered'} by ${group} nor pending`);
        }
      }
    }
    return { pending, unresolved };
  }

  /** I7: every inbox row has exactly one effect, every effect its inbox row, every committed event its inbox row. */
  checkInbox(states: readonly InboxState[]): void {
    for (const state of states) {
      for (const bad of state.badEffects) {
        this.violate('I7', `effect ${state.consumer} ${bad.eventId}`, `${state.consumer}: event ${bad.eventId} has ${bad.effects} effect rows${bad.inInbox ? '' : ' and no inbox row'}`);
      }
      for (const eventId of this.eventCommits.get(state.consumer)?.keys() ?? []) {
        if (!state.events.has(eventId)) this.violate('I7', `row ${state.consumer} ${eventId}`, `${state.consumer} committed ${eventId} (ledger) with no inbox row`);
      }
    }
  }

  /** Committed (group, event) pairs of normal entries, and the commits beyond the first (redeliveries). */
  duplicates(): { committed: number; duplicates: number } {
    const normal = new Set<string>();
    for (const entry of this.#order) if (entry.kind === 'normal') normal.add(entry.eventId);
    let committed = 0;
    let total = 0;
    for (const events of this.eventCommits.values()) {
      for (const [eventId, n] of events) {
        if (!normal.has(eventId)) continue;
        committed += 1;
        total += n;
      }
    }
    return { committed, duplicates: total - committed };
  }
}

function sameBytes(actual: readonly Buffer[] | undefined, expected: readonly Buffer[] | undefined): boolean {
  if (!actual || !expected || actual.length !== expected.length) return false;
  return actual.every((b, i) => b.equals(expected[i]!));
}

