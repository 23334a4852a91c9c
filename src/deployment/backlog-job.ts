/**
 * The backlog probe of every consumer as log lines (one per consumer, msg `backlog`), run
 * after the trim job on every platform: on AWS the lines carry EMF metrics the alarms
 * watch; on Cloudflare and locally they are what a log-based alert filters on. A group no
 * run has created yet reads as an empty backlog (missingGroupLogLine); a probe failure is
 * logged and does not hide the others.
 */
import type { Backlog } from '../probes/backlog';
import { consumerBacklog } from './consumer-backlog';
import { backlogLogLine, missingGroupLogLine } from './log';
import { failureLine } from './log-line';
import type { DeploymentRuntime } from './runtime';

export interface BacklogJobOptions {
  readonly log: (line: string) => void;
  readonly now: () => number;
  readonly emf?: boolean;
}

/** Per consumer; undefined where the group does not exist yet or the probe failed (its log line says which). */
export type BacklogByConsumer = Readonly<Record<string, Backlog | undefined>>;

export async function logBacklogs(runtime: DeploymentRuntime, options: BacklogJobOptions): Promise<BacklogByConsumer> {
  const deployment = runtime.config.name;
  const probes = [...runtime.config.consumers.values()].map(async (plan) => {
    const { stream, group } = plan.config;
    const line = { deployment, consumer: plan.name, stream, group, now: options.now, emf: options.emf };
    try {
      const probed = await consumerBacklog(runtime.port, plan);
      if (probed.status === 'no_group') {
        options.log(missingGroupLogLine(line));
        return [plan.name, undefined] as const;
      }
      options.log(backlogLogLine(probed, line));
      return [plan.name, probed as Backlog] as const;
    } catch (error) {
      options.log(failureLine({ deployment, job: 'backlog', consumer: plan.name, stream, group, now: options.now }, error));
      return [plan.name, undefined] as const;
    }
  });
  return Object.fromEntries(await Promise.all(probes));
}
