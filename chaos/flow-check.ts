/**
 * I9 (issue 27, SPEC §5.7): per group and flow key, never more handlers in flight at once than
 * the group's flow limit — judged from the handlers' own FLOW_START / FLOW_END lines, across
 * processes (one machine, one clock).
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

interface Interval extends FlowStartLine {
  readonly end: number;
}

export class FlowIntervals {
  readonly #open = new Map<string, FlowStartLine>();
  readonly #closed: Interval[] = [];
  /** Handlers that ran past their lease's end (outside the guarantee; reported). */
  pastLease = 0;

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
}
