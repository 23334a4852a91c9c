/** `poll <consumer>`: one run, reported as the same JSON line a deployed function logs. */
import { runPollJob, type PollJobOptions, type PollJobReport } from '../../src/deployment/jobs';
import type { DeploymentRuntime } from '../../src/deployment/runtime';
import { runLogLine } from '../../src/deployment/log';
import type { RunMode } from '../../src/consume/run';
import type { CommandContext } from '../context';
import { parseDuration } from '../duration';
import { UsageError } from '../exit-codes';
import { consumerNamed } from '../load-config';

export async function pollCommand(ctx: CommandContext): Promise<void> {
  const { args, loaded } = ctx;
  if (args.positionals.length > 1) throw new UsageError('poll takes one consumer');
  const plan = consumerNamed(loaded.config, args.positionals[0]);
  const mode = args.string('mode') ?? plan.mode;
  if (mode !== 'drain' && mode !== 'continuous') throw new UsageError('--mode must be drain or continuous');
  const budget = args.string('budget');
  const budgetMs = pollBudgetMs(budget === undefined ? undefined : parseDuration(budget, 'budget'), plan.config.runBudgetMs, ctx);

  const runtime = ctx.runtime();
  if (mode === 'continuous') ctx.io.progress(`polling ${plan.name} continuously for up to ${budgetMs} ms (Ctrl-C stops starting handlers and gives back the rest)…`);
  const options = { deadline: Date.now() + budgetMs, consumerName: args.string('consumer-name'), signal: ctx.io.signal };
  const result = mode === plan.mode ? await runPollJob(runtime, plan.name, options) : await pollInMode(runtime, plan.name, mode, options);
  const { report } = result;
  if (args.json) ctx.io.out(runLogLine(result, { deployment: loaded.config.name }));
  else {
    ctx.io.out(
      `${plan.name}: handled ${report.handled}, acked ${report.acked}, dead-lettered ${report.deadLettered}, retained ${report.retained}, ` +
        `reclaimed ${report.reclaimed} in ${report.rounds} round(s), ${report.durationMs} ms${report.stoppedForDeadline ? ' (stopped for its deadline)' : ''}`,
    );
    if (report.deletedPending > 0) ctx.io.err(`warning: ${report.deletedPending} pending entries were deleted before anyone acked them`);
  }
}

/**
 * A run never outlasts its consumer's runBudgetMs (minIdle must exceed it, or another run
 * could reclaim entries this one still handles): a longer --budget is capped, and said so.
 */
function pollBudgetMs(requested: number | undefined, runBudgetMs: number, ctx: CommandContext): number {
  if (requested === undefined) return runBudgetMs;
  if (requested <= runBudgetMs) return requested;
  ctx.io.err(`saga-streams: --budget ${requested} ms capped to the consumer's runBudgetMs (${runBudgetMs} ms); raise runBudgetMs (and minIdleMs above it) for longer runs`);
  return runBudgetMs;
}

/** runPollJob with another mode than the configured one (runPollJob always uses the plan's). */
async function pollInMode(runtime: DeploymentRuntime, consumer: string, mode: RunMode, options: PollJobOptions): Promise<PollJobReport> {
  // No ensureGroup first: the run creates a missing group on NOGROUP, under its deadline.
  const poller = runtime.poller(consumer, options.consumerName);
  const report = await poller.run({ mode, deadline: options.deadline, signal: options.signal });
  return { job: 'poll', consumer, stream: poller.config.stream, group: poller.config.group, report };
}
