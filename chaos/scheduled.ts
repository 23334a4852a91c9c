/**
 * I8, scheduled delivery (SPEC §5.6), for the `scheduled` scenario: every scheduled event is
 * appended to its stream at most once, never before its due time by the Redis clock, and
 * never lost. A scheduled event has no entry id until a move appends it, so the stream is
 * scanned for the events the publisher scheduled as they appear:
 * - early: the entry id's millisecond part is the Redis clock at the XADD (the move's), the
 *   same clock the due time was set by (the schedule script's TIME): an id below the due
 *   time is an append before due;
 * - twice: a second entry with an event id already seen (the move appended it again);
 * - lost: at the end, an event neither in the stream nor still in the schedule.
 * A move can append an event before its publisher hears back (a publish retried over a Redis
 * kill answers after the move, or a due time of 0 ms is moved at once): an entry whose event id
 * is not expected yet is kept aside and judged when `expect` names it, never skipped.
 * An event found is handed to the History as a normal entry, so I1-I6 judge its delivery.
 */
import type { Cluster, Redis } from 'ioredis';
import type { History } from './checker';

type Admin = Redis | Cluster;

const SCAN_COUNT = 1_000;

export class ScheduleWatch {
  /** event id → due time (ms, Redis clock) of every event the publisher scheduled. */
  readonly #due = new Map<string, number>();
  /** event id → entry id of the scheduled events found in the stream. */
  readonly #found = new Map<string, string>();
  /** event id → entry ids seen in the stream before the publisher's answer named the event. */
  readonly #early = new Map<string, string[]>();
  #lastScanned = '0-0';
  /** Appended at least this many ms after their due time (the worst, for the report). */
  worstLatenessMs = 0;
  #latenessSum = 0;

  constructor(
    readonly stream: string,
    readonly history: History,
  ) {}

  /** The publisher scheduled `eventId` for `dueMs` (retried publishes answer the same due time). */
  expect(eventId: string, dueMs: number): void {
    this.#due.set(eventId, dueMs);
    const seen = this.#early.get(eventId);
    if (seen === undefined) return;
    this.#early.delete(eventId);
    for (const id of seen) this.#judge(id, eventId);
  }

  get scheduled(): number {
    return this.#due.size;
  }

  get moved(): number {
    return this.#found.size;
  }

  get meanLatenessMs(): number {
    return this.#found.size === 0 ? 0 : this.#latenessSum / this.#found.size;
  }

  /** Reads what was appended since the last scan and judges the scheduled events among it. */
  async scan(admin: Admin): Promise<void> {
    for (;;) {
      const entries = (await admin.xrange(this.stream, `(${this.#lastScanned}`, '+', 'COUNT', SCAN_COUNT)) as Array<[string, string[]]>;
      for (const [id, flat] of entries) this.#judge(id, eventIdOf(flat));
      if (entries.length === 0) return;
      this.#lastScanned = entries.at(-1)![0];
      if (entries.length < SCAN_COUNT) return;
    }
  }

  #judge(id: string, eventId: string | undefined): void {
    if (eventId === undefined) return;
    const due = this.#due.get(eventId);
    if (due === undefined) {
      this.#early.set(eventId, [...(this.#early.get(eventId) ?? []), id]);
      return;
    }
    const earlier = this.#found.get(eventId);
    if (earlier !== undefined) {
      if (earlier !== id) this.history.violate('I8', `twice ${eventId}`, `scheduled event ${eventId} was appended twice (${earlier} and ${id})`);
      return;
    }
    this.#found.set(eventId, id);
    const appendedAt = Number(id.split('-')[0]);
    if (appendedAt < due) this.history.violate('I8', `early ${eventId}`, `scheduled event ${eventId} was appended at ${appendedAt} (entry ${id}), ${due - appendedAt} ms before its due time ${due} (Redis clock)`);
    const lateness = Math.max(0, appendedAt - due);
    this.worstLatenessMs = Math.max(this.worstLatenessMs, lateness);
    this.#latenessSum += lateness;
    this.history.add({ id, eventId, kind: 'normal', label: 'scheduled' });
  }

  /** At the end: an event neither appended nor still scheduled is lost; returns how many still wait in the schedule. */
  async finish(admin: Admin, scheduleKey: string): Promise<number> {
    await this.scan(admin);
    let waiting = 0;
    for (const eventId of this.#due.keys()) {
      if (this.#found.has(eventId)) continue;
      const score = await admin.zscore(scheduleKey, eventId);
      if (score !== null) waiting += 1;
      else this.history.violate('I8', `lost ${eventId}`, `scheduled event ${eventId} is neither in the stream nor in the schedule`);
    }
    return waiting;
  }
}

function eventIdOf(flat: readonly string[]): string | undefined {
  for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i] === 'event_id') return flat[i + 1];
  return undefined;
}
