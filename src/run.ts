/**
 * A run: repeated rounds under one deadline. `drain` stops once a round finds no fresh
 * entries and the reclaim cursor has completed its pass over the PEL (cron triggers);
 * `continuous` keeps going until the deadline, waiting between empty rounds.
 */
import type { ConsumerConfig } from './config';
import { RunDeadlineTooCloseError } from './errors';
import { pollRound, type RoundDeps } from './round';
import { addRound, EMPTY_RUN, type RoundReport, type RunReport } from './report';
import { maxEntryId, waitForEntries, type WakeState } from './wait';

/** Below this much handler time after the settle reserve, a run does not start. */
export const MIN_HANDLER_WINDOW_MS = 50;

export type RunMode = 'drain' | 'continuous';

export interface RunOptions {
  readonly mode: RunMode;
  /** Epoch ms; clamped to start + config.runBudgetMs so minIdle > run duration holds. */
  readonly deadline?: number;
  /** Stops the run after the current round (e.g. Ctrl-C). */
  readonly signal?: AbortSignal;
  readonly onRound?: (report: RoundReport) => void;
}

/** The run's effective deadline, or RunDeadlineTooCloseError when too little time remains to start. */
export function runDeadline(config: ConsumerConfig, requested: number | undefined, startedAt: number): number {
  const deadline = Math.min(requested ?? Number.POSITIVE_INFINITY, startedAt + config.runBudgetMs);
  const required = config.settleReserveMs + MIN_HANDLER_WINDOW_MS;
  if (deadline - startedAt < required) throw new RunDeadlineTooCloseError(deadline - startedAt, required);
  return deadline;
}

export async function runPoller(deps: RoundDeps, options: RunOptions): Promise<RunReport> {
  const { config, now } = deps;
  const startedAt = now();
  const deadline = runDeadline(config, options.deadline, startedAt);

  const wake: WakeState = { lastSeenId: '$' };
  const handlingTimeLeft = () => deadline - config.settleReserveMs - now();
  let total = EMPTY_RUN;
  while (handlingTimeLeft() > 0 && !options.signal?.aborted) {
    const { report, claim } = await pollRound(deps, deadline);
    total = addRound(total, report);
    options.onRound?.(report);
    if (report.stoppedForDeadline) break;

    const freshCount = claim.entries.length - claim.reclaimed;
    // Fresh entries come in id order after the reclaimed ones: the last is the newest.
    if (freshCount > 0) wake.lastSeenId = maxEntryId(wake.lastSeenId, claim.entries[claim.entries.length - 1]!.id);
    if (options.mode === 'drain') {
      if (freshCount === 0 && claim.nextCursor === '0-0') break;
    } else if (claim.entries.length === 0) {
      const waitMs = Math.min(config.blockMs, handlingTimeLeft());
      await waitForEntries(deps.port, config.keys.stream, wake, waitMs, options.signal, config.wait);
    }
  }
  return { ...total, durationMs: now() - startedAt, stoppedForDeadline: total.stoppedForDeadline || handlingTimeLeft() <= 0 };
}
