/**
 * What the previous run of this process observed on a stream and group: the entry size
 * (sizes a run's first claim without a probe, see entry-size.ts) and the handling time per
 * entry (lets a run claim its second batch beside its first instead of waiting a round to
 * learn how long one takes). Warm Lambda containers, long-lived processes and repeated cron
 * runs start from it. A wrong estimate costs nothing unsafe: the byte budget follows the
 * entries actually read from the first claim on, and whatever a stopping run claimed ahead
 * and never started is released (SPEC §5.1 (b)).
 */

/** (stream, group) pairs remembered per process; beyond this the oldest is forgotten (names are unbounded input). */
const REMEMBERED_STREAMS = 256;

/** What a finished run observed on its stream. */
export interface Observed {
  readonly entryBytes?: number;
  /** Wall-clock handling time per entry, ms (concurrency included). */
  readonly perEntryMs?: number;
}

const learned = new Map<string, Observed>();

/** What the previous run of this process observed on `stream` (group: handling times differ per consumer). */
export function remembered(stream: string, group: string): Observed {
  return learned.get(`${group}\u0000${stream}`) ?? {};
}

export function remember(stream: string, group: string, observed: Observed): void {
  const key = `${group}\u0000${stream}`;
  learned.delete(key);
  learned.set(key, observed);
  if (learned.size > REMEMBERED_STREAMS) learned.delete(learned.keys().next().value!);
}
