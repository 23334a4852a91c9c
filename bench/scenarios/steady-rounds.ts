/**
 * Round trips per steady round (issue 15): judged on the rounds between the first two (the
 * run's first claim; the first claim sent beside a round, with nothing to settle yet) and the
 * last full one, where a loop's fixed costs do not sit (the final settle and the empty claims
 * that end a drain come after it). Every round of that span counts, full or not: over TCP a
 * round's exchange goes out before the round before it is reported (run-loop.ts), so the
 * round trips counted between two reports belong to a span, not to one round, and a round
 * left out would take its neighbour's exchange with it.
 */
export interface RoundSample {
  readonly handled: number;
  /** Round trips counted between the end of the previous round and the end of this one. */
  readonly roundTrips: number;
}

/** Undefined when no round was steady (a run of fewer than four full batches). */
export function steadyRoundTrips(rounds: readonly RoundSample[], batch: number): { rounds: number; perRound: number; max: number } | undefined {
  const window = rounds.slice(2, -1);
  let lastFull = window.length - 1;
  while (lastFull >= 0 && window[lastFull]!.handled !== batch) lastFull -= 1;
  if (lastFull < 0) return undefined;
  const steady = window.slice(0, lastFull + 1);
  const total = steady.reduce((sum, r) => sum + r.roundTrips, 0);
  return { rounds: steady.length, perRound: total / steady.length, max: Math.max(...steady.map((r) => r.roundTrips)) };
}
