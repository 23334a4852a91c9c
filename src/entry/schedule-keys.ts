/**
 * The keys of a stream's schedule (SPEC §5.6), derived from the stream name so that under
 * Redis Cluster they share its hash slot: the scripts that schedule, move (claim.lua and
 * retention.lua too), list and cancel touch them beside the stream and its size records.
 */
export interface ScheduleKeys {
  /** Sorted set: member event_id, score its due time (ms epoch, Redis clock). */
  readonly due: string;
  /** Hash: event_id → the entry's fields, packed with cmsgpack (lua/lib/schedule-entry.lua). */
  readonly entries: string;
}

export function scheduleKeys(stream: string): ScheduleKeys {
  return { due: `${stream}:schedule`, entries: `${stream}:schedule:entries` };
}
