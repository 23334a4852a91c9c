/**
 * The backlog probe of every consumer as log lines (one per consumer, msg `backlog`), run
 * after the trim job on every platform: on AWS the lines carry EMF metrics the alarms
 * watch; on Cloudflare and locally they are what a log-based alert filters on. A probe
 * failure (e.g. a group no consumer has created yet) is logged and does not hide the others.
 */
import { probeBacklog, type Backlog } from '../probes/backlog';
import { backlogLogLine } from './log';
import { failureLine } from './log-line';
import type { DeploymentRuntime } from './runtime';

export interface BacklogJobOptions {
  readonly log: (line: string) => void;
  readonly now: () => number;
  readonly emf?: boolean;
}

/** Per consumer; undefined where the probe failed (its log line says why). */
export type BacklogByConsumer = Readonly<Record<string, Backlog | undefined>>;

export async function logBacklogs(runtime: DeploymentRuntime, options: BacklogJobOptions): Promise<BacklogByConsumer> {
  const deployment = runtime.config.name;
  const probes = [...runtime.config.consumers.values()].map(async (plan) => {
    const { stream, group, keys } = plan.config;
    try {
      const backlog = await probeBacklog(runtime.port, { stream, group, dlt: keys.dlt });
      options.log(backlogLogLine(backlog, { deployment, consumer: plan.name, stream, group, now: options.now, emf: options.emf }));
      return [plan.name, backlog] as const;
    } catch (error) {
      options.log(failureLine({ deployment, job: 'backlog', consumer: plan.name, stream, group, now: options.now }, error));
      return [plan.name, undefined] as const;
    }
  });
  return Object.fromEntries(await Promise.all(probes));
}
