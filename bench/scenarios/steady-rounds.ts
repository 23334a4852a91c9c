/**
 * Round trips per steady round (issue 15): judged on rounds that handled a full batch,
 * without the first two (the run's first claim; the first claim sent beside a round, with
 * nothing to settle yet) and the last (the final settle and the empty claim that ends a
 * drain), where a loop's fixed costs sit.
 */
export interface RoundSample {
  readonly handled: number;
  /** Round trips counted between the end of the previous round and the end of this one. */
  readonly roundTrips: number;
}

/** Undefined when no round was steady (a run of fewer than four full batches). */
export function steadyRoundTrips(rounds: readonly RoundSample[], batch: number): { rounds: number; perRound: number; max: number } | undefined {
  const steady = rounds.slice(2, -1).filter((r) => r.handled === batch);
  if (steady.length === 0) return undefined;
  const total = steady.reduce((sum, r) => sum + r.roundTrips, 0);
  return { rounds: steady.length, perRound: total / steady.length, max: Math.max(...steady.map((r) => r.roundTrips)) };
}
