/**
 * I9 (issue 27, SPEC §5.7): per group and flow key, never more handlers in flight at once than
 * the group's flow limit — judged from the handlers' own FLOW_START / FLOW_END lines, across
 * processes (one machine, one clock).
 * I10, for a group with strict order: a key's entry never starts before every earlier entry of
 * the key (stream order) committed — judged from the starts and the FLOW_COMMIT lines.
 *
 * What a handler's interval is: from its start to its end, and no later than its lease's end
 * (its run's deadline + the overrun: the guarantee's bound — a handler still running past it
 * is outside the guarantee and is counted, not blamed). A handler whose process died before
 * it ended ends when its process did (the harness's kill time, or the exit it saw). A start
 * while `limit` other intervals of the key are open is a violation.
 */
export interface FlowStartLine {
  readonly pid: number;
  readonly group: string;
  readonly key: string;
  readonly entryId: string;
  readonly start: number;
  /** The run's deadline + overrun: the earliest the run's lease on the key can end. */
  readonly leaseEnd: number;
}

export interface FlowEndLine {
  readonly pid: number;
  readonly entryId: string;
  readonly start: number;
  readonly end: number;
}

/** A handler of a keyed entry wrote its commit to the ledger at `at`. */
export interface FlowCommitLine {
  readonly pid: number;
  readonly group: string;
  readonly entryId: string;
  readonly at: number;
}

interface Interval extends FlowStartLine {
  readonly end: number;
}

export class FlowIntervals {
  readonly #open = new Map<string, FlowStartLine>();
  readonly #closed: Interval[] = [];
  /** `${group} ${entryId}` → its first commit (ms). */
  readonly #firstCommit = new Map<string, number>();
  /** Handlers that ran past their lease's end (outside the guarantee; reported). */
  pastLease = 0;

  committed(line: FlowCommitLine): void {
    const id = `${line.group} ${line.entryId}`;
    const known = this.#firstCommit.get(id);
    if (known === undefined || line.at < known) this.#firstCommit.set(id, line.at);
  }

  started(line: FlowStartLine): void {
    this.#open.set(`${line.pid} ${line.entryId} ${line.start}`, line);
  }

  ended(line: FlowEndLine): void {
    const id = `${line.pid} ${line.entryId} ${line.start}`;
    const start = this.#open.get(id);
    if (start === undefined) return;
    this.#open.delete(id);
    this.#close(start, line.end);
  }

  /** The process is gone at `at` and all its lines are read: its open handlers ended then. */
  processGone(pid: number | undefined, at: number): void {
    for (const [id, line] of this.#open) {
      if (line.pid !== pid) continue;
      this.#open.delete(id);
      this.#close(line, at);
    }
  }

  get handlers(): number {
    return this.#closed.length + this.#open.size;
  }

  #close(line: FlowStartLine, end: number): void {
    if (end > line.leaseEnd) this.pastLease += 1;
    this.#closed.push({ ...line, end: Math.min(end, line.leaseEnd) });
  }

  /** Every start that found its key's limit already in flight in its group, described. */
  violations(limitOf: (group: string) => number): string[] {
    const byKey = new Map<string, Interval[]>();
    for (const interval of this.#closed) {
      const id = `${interval.group}\u0000${interval.key}`;
      const list = byKey.get(id) ?? [];
      list.push(interval);
      byKey.set(id, list);
    }
    const found: string[] = [];
    for (const intervals of byKey.values()) {
      intervals.sort((a, b) => a.start - b.start);
      const limit = limitOf(intervals[0]!.group);
      // Intervals still open at each start; one ending exactly at a start is over (back to back).
      let open: Interval[] = [];
      for (const next of intervals) {
        open = open.filter((interval) => interval.end > next.start);
        if (open.length >= limit) {
          const others = open.map((o) => `${o.entryId} (pid ${o.pid}, ${o.start}..${o.end})`).join(', ');
          found.push(`group ${next.group} key ${next.key}: ${next.entryId} (pid ${next.pid}) started at ${next.start} with ${open.length} in flight (limit ${limit}): ${others}`);
        }
        open.push(next);
      }
    }
    return found;
  }

  /**
   * I10 for `group` (strict order): every start of an entry that came before an earlier entry
   * of its key committed, described. `entries`: the group's keyed entries in stream order;
   * `committedEver(id)`: the ledger holds a commit of it — a process killed between its ledger
   * write and its FLOW_COMMIT line leaves a commit of unknown time, which is not judged.
   */
  orderViolations(group: string, entries: ReadonlyArray<{ readonly id: string; readonly key: string }>, committedEver: (entryId: string) => boolean): string[] {
    const firstStart = new Map<string, number>();
    for (const interval of [...this.#closed, ...this.#open.values()]) {
      if (interval.group !== group) continue;
      const known = firstStart.get(interval.entryId);
      if (known === undefined || interval.start < known) firstStart.set(interval.entryId, interval.start);
    }
    /** Per key: the latest first-commit among the entries so far, and the first never committed. */
    const byKey = new Map<string, { latest: number; latestBy: string; uncommitted: string | undefined }>();
    const found: string[] = [];
    for (const { id, key } of entries) {
      let state = byKey.get(key);
      if (state === undefined) byKey.set(key, (state = { latest: Number.NEGATIVE_INFINITY, latestBy: '', uncommitted: undefined }));
      const start = firstStart.get(id);
      if (start !== undefined && state.uncommitted !== undefined) {
        found.push(`group ${group} key ${key}: ${id} started at ${start}, and the earlier ${state.uncommitted} never committed`);
      } else if (start !== undefined && state.latest > start) {
        found.push(`group ${group} key ${key}: ${id} started at ${start}, before the earlier ${state.latestBy} committed at ${state.latest}`);
      }
      const commit = this.#firstCommit.get(`${group} ${id}`);
      if (commit !== undefined) {
        if (commit > state.latest) Object.assign(state, { latest: commit, latestBy: id });
      } else if (!committedEver(id)) {
        state.uncommitted ??= id;
      }
    }
    return found;
  }
}
