/**
 * Time budgets of a Worker invocation. A poll run must have settled everything it decided
 * before the platform stops it, so its deadline is the platform limit minus a reserve.
 * (The consumer's own `runBudgetMs` clamps it further.)
 */

/** Cron Triggers on schedules shorter than an hour may run for 30 s (Workers limits). */
export const SCHEDULED_LIMIT_MS = 30_000;
/** Queue consumer invocations may run for 15 min of wall-clock time (Workers limits). */
export const QUEUE_LIMIT_MS = 15 * 60_000;
/** Left for the last settle round trip and the log lines after the deadline. */
export const DEADLINE_RESERVE_MS = 2_000;

export function deadlineWithin(limitMs: number, startedAt: number): number {
  return startedAt + limitMs - DEADLINE_RESERVE_MS;
}
