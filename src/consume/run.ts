/**
 * A run: repeated rounds under one deadline. `drain` stops once a round finds no fresh
 * entries and the reclaim cursor has completed its pass over the PEL (cron triggers);
 * `continuous` keeps going until the deadline, waiting between empty rounds. The rounds
 * overlap (SPEC §5.1): see run-loop.ts for how, and for the rules that keep it safe.
 */
import { MIN_HANDLER_WINDOW_MS, type ConsumerConfig } from './config';
import { RunDeadlineTooCloseError } from '../ground/errors';
import type { RunReport } from './report';
import type { RunOptions } from './run-options';
import { consumerScope, type RoundDeps } from './round';
import { RunLoop } from './run-loop';
import { traceRun } from '../telemetry/tracing';

// Config validation refuses a run budget that leaves less (config.ts), so it lives there.
export { MIN_HANDLER_WINDOW_MS };

export type { RunMode, RunOptions } from './run-options';

/**
 * What a failed run got done before it failed: every error a run throws carries its report
 * (the counts of what it settled, released and held), when the thrown value can hold one.
 */
export function runReportOf(error: unknown): RunReport | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  try {
    return (error as { runReport?: RunReport }).runReport;
  } catch {
    return undefined;
  }
}

/** The run's effective deadline, or RunDeadlineTooCloseError when too little time remains to start. */
export function runDeadline(config: ConsumerConfig, requested: number | undefined, startedAt: number): number {
  const deadline = Math.min(requested ?? Number.POSITIVE_INFINITY, startedAt + config.runBudgetMs);
  const required = config.settleReserveMs + MIN_HANDLER_WINDOW_MS;
  if (deadline - startedAt < required) throw new RunDeadlineTooCloseError(deadline - startedAt, required);
  return deadline;
}

/** A run, inside its `poll <stream>` trace span when an OpenTelemetry SDK is registered. */
export function runPoller(deps: RoundDeps, options: RunOptions): Promise<RunReport> {
  return traceRun(consumerScope(deps.config), options.mode, () => runRounds(deps, options));
}

async function runRounds(deps: RoundDeps, options: RunOptions): Promise<RunReport> {
  const startedAt = deps.now();
  return new RunLoop(deps, options, startedAt, runDeadline(deps.config, options.deadline, startedAt)).run();
}
