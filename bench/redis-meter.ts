/**
 * Redis's side of a run, asked from the parent: snapshots of `INFO cpu commandstats` on
 * every server a scenario uses, taken once the children are warmed up and waiting at their
 * barrier and again after they exit, so the warm-up pass stays out of the figures.
 */
import { Redis } from 'ioredis';
import { parseInfo, redisFigures, sumCounters, type ServerCounters } from './redis-info';
import type { ScenarioResult } from './scenarios/types';

export interface RedisMeter {
  snapshot(): Promise<ServerCounters>;
  close(): void;
}

/** One plain connection per server: a Cluster's masters are asked one by one and summed. */
export function openRedisMeter(servers: ReadonlyArray<{ host: string; port: number }>): RedisMeter {
  const clients = servers.map(({ host, port }) => new Redis({ host, port }));
  return {
    async snapshot() {
      // One INFO call per server holds both sections, so they describe the same moment.
      const replies = await Promise.all(clients.map((c) => c.info('cpu', 'commandstats')));
      return sumCounters(replies.map(parseInfo));
    },
    close: () => clients.forEach((c) => c.disconnect()),
  };
}

/**
 * Runs a scenario whose children wait at a barrier, snapshots the servers when `atStart`
 * is called (every child warmed up, none started) and when the run has ended, and adds
 * the difference per entry to the result.
 */
export async function withRedisFigures(
  meter: RedisMeter,
  run: (atStart: () => Promise<void>) => Promise<ScenarioResult>,
): Promise<ScenarioResult> {
  let before: ServerCounters | undefined;
  const result = await run(async () => {
    before = await meter.snapshot();
  });
  const after = await meter.snapshot();
  if (!before) throw new Error('the run ended without reaching its start barrier, so its Redis figures cannot be taken');
  return { ...result, redis: redisFigures(before, after, result.entries) };
}
