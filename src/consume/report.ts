/** Round and run reports (SPEC §8): low-cardinality counters, one JSON line per run. */

export interface RoundReport {
  readonly acked: number;
  /** DLT records this run wrote (the settle script's count). */
  readonly deadLettered: number;
  /** Dead-letters whose marker already existed (replay after a partial failure): acked, no second record. */
  readonly markerHits: number;
  /**
   * Entries acked or dead-lettered whose durability wait (config `durability`) fell short: the
   * settle happened; that it survives losing the primary is not confirmed.
   */
  readonly settledUnconfirmed: number;
  readonly retained: number;
  /** Retained because the handler returned something other than its success values: a bug to fix. */
  readonly handlerContractErrors: number;
  readonly reclaimed: number;
  /** Claimed but never handed to a handler when the run stopped: given back for immediate reclaim. */
  readonly released: number;
  /**
   * Never handed to a handler because an earlier entry of their ordering key was retained:
   * put back pending as they were when the run stopped (reclaimable with the entry that
   * holds their key, delivery count restored).
   */
  readonly held: number;
  /** Claims that found the stored reclaim cursor unusable (`reset`) or the cursor key of another type (`wrong_type`): see claim.lua. */
  readonly cursorResets: number;
  /** Pending entries deleted before anyone acked them: an alarm, never routine. */
  readonly deletedPending: number;
  /** Due scheduled events the run's claims moved into the stream (SPEC §5.6). */
  readonly scheduledMoved: number;
  /**
   * Entries a claim took and parked, unhandled, because their flow key was leased to as many
   * other runs as its limit allows (SPEC §5.7): pending, back when a slot frees.
   */
  readonly flowParked: number;
  /**
   * Of flowParked, entries parked while their key's own rate limit (`rateLimit.key: 'flow'`)
   * had no room or a handler's deferral held the key — at the key's front or queued behind it:
   * waiting on a limit, not on a busy key.
   */
  readonly flowParkedLimited: number;
  /** Flow keys whose lease this run had lost by the time it gave them back (it outlived its lease): an alarm. */
  readonly flowLeaseLost: number;
  /** Dead-letters for failed origin checks (subset of deadLettered). */
  readonly authRejected: number;
  readonly handled: number;
  readonly handlerMicrosSum: number;
  readonly roundTrips: number;
  readonly durationMs: number;
  readonly stoppedForDeadline: boolean;
  /**
   * The earliest due time (Redis clock, ms epoch) among pending entries a claim saw and left
   * because they were not due yet (retry backoff, deferral, minIdle): of the round's claim in a
   * round report, of every claim of the run in a run report. Absent when none was seen. A
   * poller woken then (the delay is this minus Redis TIME) finds an entry to reclaim.
   */
  readonly nextDueAt?: number;
}

export interface RunReport extends RoundReport {
  readonly rounds: number;
}

/** The earlier of two optional times. */
export function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined || a <= b ? a : b;
}

export const EMPTY_ROUND: RoundReport = Object.freeze({
  acked: 0,
  deadLettered: 0,
  markerHits: 0,
  settledUnconfirmed: 0,
  retained: 0,
  handlerContractErrors: 0,
  reclaimed: 0,
  released: 0,
  held: 0,
  cursorResets: 0,
  deletedPending: 0,
  scheduledMoved: 0,
  flowParked: 0,
  flowParkedLimited: 0,
  flowLeaseLost: 0,
  authRejected: 0,
  handled: 0,
  handlerMicrosSum: 0,
  roundTrips: 0,
  durationMs: 0,
  stoppedForDeadline: false,
});

/** The counters a run sums over its rounds (and the log line reports). */
export const COUNTERS = [
  'acked',
  'deadLettered',
  'markerHits',
  'settledUnconfirmed',
  'retained',
  'handlerContractErrors',
  'reclaimed',
  'released',
  'held',
  'cursorResets',
  'deletedPending',
  'scheduledMoved',
  'flowParked',
  'flowParkedLimited',
  'flowLeaseLost',
  'authRejected',
  'handled',
  'handlerMicrosSum',
  'roundTrips',
] as const;

/** Adds a round to a run total; duration is the run's own, measured by the caller. */
export function addRound(total: RunReport, round: RoundReport): RunReport {
  const sum = { ...total, rounds: total.rounds + 1 } as { -readonly [K in keyof RunReport]: RunReport[K] };
  for (const key of COUNTERS) sum[key] = total[key] + round[key];
  sum.stoppedForDeadline = total.stoppedForDeadline || round.stoppedForDeadline;
  return sum;
}

export const EMPTY_RUN: RunReport = Object.freeze({ ...EMPTY_ROUND, rounds: 0 });
