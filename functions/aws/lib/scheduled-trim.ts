/**
 * Trim on a schedule: safe trim, DLT retention and the consumer reaper for every stream
 * (runTrimJob), then the backlog probe of every consumer as metric lines. A probe failure
 * (e.g. a group that no consumer has created yet) is logged and does not hide the others;
 * a trim failure fails the invocation after the probes ran. The input `{"job": "backlog"}`
 * (the stack's every-minute rule) runs the probe alone: per-minute backlog metrics.
 */
import type { ScheduledEvent } from 'aws-lambda';
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { runTrimJob, type TrimJobReport } from '../../../src/deployment/jobs';
import { runLogLine } from '../../../src/deployment/log';
import { logBacklogs, type BacklogByConsumer } from '../../../src/deployment/backlog-job';
import { lambdaContainer } from './container';
import { withDefaults, type LambdaDeps } from './deps';
import { problemLine } from './log-lines';

export interface TrimRun {
  /** Undefined for a backlog-probe-only run. */
  readonly trim?: TrimJobReport;
  /** Per consumer; undefined where the probe failed (its log line says why). */
  readonly backlog: BacklogByConsumer;
}

export function createTrimHandler(config: DeploymentConfig, deps: LambdaDeps = {}) {
  const resolved = withDefaults(deps);
  const start = lambdaContainer(config, resolved, 'trim');
  const context = { deployment: config.name, job: 'trim' as const, now: resolved.now };

  return async (event?: ScheduledEvent | { readonly job: 'backlog' }): Promise<TrimRun> => {
    const probeOnly = (event as { job?: unknown } | undefined)?.job === 'backlog';
    const { runtime } = await start().catch((error: unknown) => {
      resolved.log(problemLine({ ...context, job: probeOnly ? 'backlog' : 'trim' }, error));
      throw error;
    });
    if (probeOnly) return { backlog: await logBacklogs(runtime, { log: resolved.log, now: resolved.now, emf: true }) };
    const trim = await runTrimJob(runtime).then(
      (report) => {
        resolved.log(runLogLine(report, { deployment: config.name, emf: true, now: resolved.now }));
        return { report };
      },
      (error: unknown) => {
        resolved.log(problemLine(context, error));
        return { error };
      },
    );
    const backlog = await logBacklogs(runtime, { log: resolved.log, now: resolved.now, emf: true });
    if ('error' in trim) throw trim.error;
    return { trim: trim.report, backlog };
  };
}
