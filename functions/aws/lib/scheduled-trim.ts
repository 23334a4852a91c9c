/**
 * Trim on a schedule: safe trim, DLT retention and the consumer reaper for every stream
 * (runTrimJob), then the backlog probe of every consumer as metric lines. A probe failure
 * (e.g. a group that no consumer has created yet) is logged and does not hide the others;
 * a trim failure fails the invocation after the probes ran.
 */
import type { ScheduledEvent } from 'aws-lambda';
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { runTrimJob, type TrimJobReport } from '../../../src/deployment/jobs';
import { runLogLine } from '../../../src/deployment/log';
import type { DeploymentRuntime } from '../../../src/deployment/runtime';
import { probeBacklog, type Backlog } from '../../../src/probes/backlog';
import { backlogLogLine } from './backlog-metrics';
import { lambdaContainer } from './container';
import { withDefaults, type LambdaDeps, type ResolvedDeps } from './deps';
import { problemLine } from './log-lines';

export interface TrimRun {
  readonly trim: TrimJobReport;
  /** Per consumer; undefined where the probe failed (its log line says why). */
  readonly backlog: Readonly<Record<string, Backlog | undefined>>;
}

async function probeConsumers(config: DeploymentConfig, runtime: DeploymentRuntime, deps: ResolvedDeps): Promise<TrimRun['backlog']> {
  const probes = [...config.consumers.values()].map(async (plan) => {
    const { stream, group, keys } = plan.config;
    try {
      const backlog = await probeBacklog(runtime.port, { stream, group, dlt: keys.dlt });
      deps.log(backlogLogLine(backlog, { deployment: config.name, consumer: plan.name, stream, group, now: deps.now }));
      return [plan.name, backlog] as const;
    } catch (error) {
      deps.log(problemLine({ deployment: config.name, job: 'backlog', consumer: plan.name, now: deps.now }, error));
      return [plan.name, undefined] as const;
    }
  });
  return Object.fromEntries(await Promise.all(probes));
}

export function createTrimHandler(config: DeploymentConfig, deps: LambdaDeps = {}) {
  const resolved = withDefaults(deps);
  const start = lambdaContainer(config, resolved, 'trim');
  const context = { deployment: config.name, job: 'trim' as const, now: resolved.now };

  return async (_event?: ScheduledEvent): Promise<TrimRun> => {
    const { runtime } = await start().catch((error: unknown) => {
      resolved.log(problemLine(context, error));
      throw error;
    });
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
    const backlog = await probeConsumers(config, runtime, resolved);
    if ('error' in trim) throw trim.error;
    return { trim: trim.report, backlog };
  };
}
