/**
 * Which jobs a Cloudflare cron trigger runs. Apart from jobs.ts so that functions fired by
 * their own schedule (every Lambda) never bundle the cron parser.
 */
import { toCloudflareCron } from './cron';
import type { DeploymentConfig } from './define-config';
import type { Job } from './jobs';

/**
 * The jobs of a Cloudflare cron trigger: Cloudflare hands the Worker the trigger's text, which
 * is a schedule's Cloudflare form (toCloudflareCron), not the schedule as written.
 */
export function jobsForCron(config: DeploymentConfig, cron: string): Job[] {
  const jobs: Job[] = [...config.consumers.values()]
    .filter((plan) => plan.schedule !== undefined && toCloudflareCron(plan.schedule) === cron)
    .map((plan) => ({ kind: 'poll', consumer: plan.name }));
  if (config.data.trim && toCloudflareCron(config.data.trim.schedule) === cron) jobs.push({ kind: 'trim' });
  if (config.data.postgres?.relay && toCloudflareCron(config.data.postgres.relay.schedule) === cron) jobs.push({ kind: 'relay' });
  return jobs;
}
