/**
 * Whether a stream can hold a schedule on a port (SPEC §5.6): its keys (src/entry/
 * schedule-keys.ts) share the stream's Cluster slot only through a hash tag.
 */
import { ConfigError } from '../ground/errors';
import { hasHashTag } from '../entry/hash-tag';

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
