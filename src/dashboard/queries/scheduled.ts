/**
 * What the Scheduled section reads besides listScheduled's pages: per declared stream, how
 * many events its schedule holds and when the first is due, and whether one event is in it.
 * A stream that cannot hold a schedule on this port (Cluster, no hash tag) is reported with
 * the reason instead of being asked about: its schedule keys would sit on another slot.
 */
import { scheduleKeys } from '../../entry/schedule-keys';
import { command, type RedisPort } from '../../redis/port';
import { isBytes } from '../../redis/reply';
import { runOperations } from '../../redis/script';
import { scheduleSlotProblem } from '../../schedule/keys';
import { listScheduled } from '../../schedule/list';

export type ScheduleSummary =
  | { readonly stream: string; readonly problem: undefined; readonly total: number; readonly nextDueMs: number | undefined }
  | { readonly stream: string; readonly problem: string; readonly total: 0; readonly nextDueMs: undefined };

/** One script per stream (each stays in its stream's slot on Cluster). */
export async function summarizeSchedules(port: RedisPort, streams: readonly string[]): Promise<ScheduleSummary[]> {
  return Promise.all(
    streams.map(async (stream): Promise<ScheduleSummary> => {
      const problem = scheduleSlotProblem(stream, port.cluster);
      if (problem !== undefined) return { stream, problem, total: 0, nextDueMs: undefined };
      const first = await listScheduled(port, stream, { limit: 1 });
      return { stream, problem: undefined, total: first.total, nextDueMs: first.events[0]?.dueMs };
    }),
  );
}

/** The due time (ms epoch, Redis clock) of an event in the stream's schedule; undefined when it is not there. */
export async function scheduledDueOf(port: RedisPort, stream: string, eventId: string): Promise<number | undefined> {
  const [score] = await runOperations(port, [command('ZSCORE', scheduleKeys(stream).due, eventId)]);
  if (score === null || score === undefined) return undefined;
  // TCP answers bytes, some REST clients a number: both are the score.
  const due = Number(isBytes(score) ? new TextDecoder().decode(score) : score);
  return Number.isFinite(due) ? due : undefined;
}
