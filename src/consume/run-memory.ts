/**
 * What the previous run of this process observed on a stream and group: the handling time
 * per entry (lets a run claim its second batch beside its first instead of waiting a round
 * to learn how long one takes) and the bytes per entry its claims counted. Warm Lambda containers, long-lived processes and repeated
 * cron runs start from it. A wrong estimate costs nothing unsafe: claims are sized by the
 * time left at the speed each run observes, the byte budget is enforced by claim.lua on
 * the sizes Redis measures, and whatever a stopping run claimed ahead and never started is
 * released (SPEC §5.1 (b)).
 *
 * A poller is given one (deps.memory): by default the process-wide `processRunMemory`, so
 * tests and embedders can give each poller its own.
 */

/** (stream, group) pairs remembered; beyond this the oldest is forgotten (names are unbounded input). */
const REMEMBERED_STREAMS = 256;

/** What a finished run observed on its stream. */
export interface Observed {
  /** Wall-clock handling time per entry, ms (concurrency included). */
  readonly perEntryMs?: number;
  /**
   * What claims counted per entry against the byte budget: a run's first claim asks for about
   * what fits instead of a whole batch (claim.lua reads through Lua in steps, but a reclaim
   * copies each entry it looks at).
   */
  readonly bytesPerEntry?: number;
}

export class RunMemory {
  readonly #learned = new Map<string, Observed>();

  /** What the previous run observed on `stream` (per group: handling times differ per consumer). */
  recall(stream: string, group: string): Observed {
    return this.#learned.get(`${group}\u0000${stream}`) ?? {};
  }

  remember(stream: string, group: string, observed: Observed): void {
    const key = `${group}\u0000${stream}`;
    this.#learned.delete(key);
    this.#learned.set(key, observed);
    if (this.#learned.size > REMEMBERED_STREAMS) this.#learned.delete(this.#learned.keys().next().value!);
  }
}

/** The memory every poller of this process shares unless it is given its own. */
export const processRunMemory = new RunMemory();
