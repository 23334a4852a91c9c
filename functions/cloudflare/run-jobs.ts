/**
 * Runs the jobs one invocation stands for — concurrently, under one deadline, so a slow
 * consumer cannot starve the others of the invocation's time — and writes one JSON line
 * per job: the run report (SPEC §8), or the failure line (log-line.ts), as on every platform.
 */
import { runPollJob, runRelayJob, runTrimJob, type Job } from '../../src/deployment/jobs';
import { runLogLine } from '../../src/deployment/log';
import type { DeploymentRuntime } from '../../src/deployment/runtime';
import { failureLine } from '../../src/deployment/log-line';

export interface JobOutcome {
  readonly job: Job;
  readonly ok: boolean;
}

export interface RunJobsOptions {
  /** Epoch ms by which every poll run must have settled. */
  readonly deadline: number;
  readonly log: (line: string) => void;
  readonly now: () => number;
}

async function runOne(runtime: DeploymentRuntime, job: Job, options: RunJobsOptions): Promise<JobOutcome> {
  const deployment = runtime.config.name;
  try {
    const report =
      job.kind === 'trim'
        ? await runTrimJob(runtime)
        : job.kind === 'relay'
          ? await runRelayJob(runtime, { deadline: options.deadline })
          : await runPollJob(runtime, job.consumer, { deadline: options.deadline });
    options.log(runLogLine(report, { deployment, now: options.now }));
    return { job, ok: true };
  } catch (error) {
    options.log(failureLine({ deployment, job: job.kind, consumer: job.kind === 'poll' ? job.consumer : undefined, now: options.now }, error));
    return { job, ok: false };
  }
}

export function runJobs(runtime: DeploymentRuntime, jobs: readonly Job[], options: RunJobsOptions): Promise<JobOutcome[]> {
  return Promise.all(jobs.map((job) => runOne(runtime, job, options)));
}

/** Marks the invocation failed (visible in the platform's metrics) after every job has run and logged. */
export function throwIfAnyFailed(outcomes: readonly JobOutcome[]): void {
  const failed = outcomes.filter((o) => !o.ok).map((o) => (o.job.kind === 'poll' ? `poll ${o.job.consumer}` : o.job.kind));
  if (failed.length > 0) throw new Error(`${failed.length} of ${outcomes.length} jobs failed: ${failed.join(', ')}`);
}
