/**
 * The keys of a stream's schedule (SPEC §5.6), derived from the stream name so that under
 * Redis Cluster they share its hash slot: the scripts that schedule, move, list and cancel
 * touch them beside the stream (and its size records) in one script.
 */
import { ConfigError } from '../ground/errors';
import { hasHashTag } from '../entry/hash-tag';

export interface ScheduleKeys {
  /** Sorted set: member event_id, score its due time (ms epoch, Redis clock). */
  readonly due: string;
  /** Hash: event_id → the entry's fields, packed with cmsgpack (lua/lib/schedule-entry.lua). */
  readonly entries: string;
}

export function scheduleKeys(stream: string): ScheduleKeys {
  return { due: `${stream}:schedule`, entries: `${stream}:schedule:entries` };
}

/**
 * Why a stream cannot hold a schedule on this port, or undefined when it can: on Redis
 * Cluster the schedule's keys share the stream's slot only through a hash tag.
 */
export function scheduleSlotProblem(stream: string, cluster: boolean): string | undefined {
  if (!cluster || hasHashTag(stream)) return undefined;
  return `on Redis Cluster a stream holds scheduled events only with a hash tag (e.g. "orders:{o}"), which its schedule keys share; ${JSON.stringify(stream)} has none`;
}

/** For the schedule's admin functions (move, list, cancel): a ConfigError naming the stream. */
export function assertSchedulable(stream: string, cluster: boolean): void {
  const problem = scheduleSlotProblem(stream, cluster);
  if (problem !== undefined) throw new ConfigError('schedule', [{ path: 'stream', message: problem }]);
}
