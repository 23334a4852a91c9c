/**
 * Offline consistency check of a wrangler config against the deployment config and the
 * Worker module (issue 7): every cron trigger runs at least one job, every schedule in the
 * config has its cron trigger (in Cloudflare's form, see toCloudflareCron), wake-up queues are wired producer → consumer under the names
 * the config uses, the handlers the triggers need are exported, the compatibility date is
 * one the pinned workerd supports, and the declared secret names are exactly those the
 * Worker reads. Returns every problem, so one run shows all of them.
 */
import type { DeploymentConfig } from '../../src/deployment/define-config';
import { toCloudflareCron } from '../../src/deployment/cron';
import { jobsForCron } from '../../src/deployment/cron-jobs';
import { wakeUpConsumers } from '../../src/deployment/jobs';
import { workerSchedules, workerSecretNames } from '../../functions/cloudflare/wrangler-toml';

export { workerSecretNames };

/** workerd 1.20260426.1 (miniflare 4.20260426.0) refuses later dates. */
export const MAX_COMPATIBILITY_DATE = '2026-04-26';

/** The parts of wrangler.toml this check reads (snake_case, as wrangler spells them). */
export interface WranglerConfig {
  readonly main?: string;
  readonly compatibility_date?: string;
  readonly triggers?: { readonly crons?: readonly string[] };
  readonly queues?: {
    readonly producers?: ReadonlyArray<{ readonly binding: string; readonly queue: string }>;
    readonly consumers?: ReadonlyArray<{ readonly queue: string }>;
  };
  readonly secrets?: { readonly required?: readonly string[] };
}

export interface WorkerExports {
  readonly fetch?: unknown;
  readonly scheduled?: unknown;
  readonly queue?: unknown;
}

/**
 * A trigger must be the schedule's Cloudflare form (toCloudflareCron), not the schedule as
 * written: Cloudflare numbers days of the week 1-7 from Sunday, so a copied `0 9 * * 1`
 * would poll on Sundays instead of Mondays.
 */
function scheduleProblems(wrangler: WranglerConfig, config: DeploymentConfig, worker: WorkerExports): string[] {
  const crons = wrangler.triggers?.crons ?? [];
  const problems = crons.filter((cron) => jobsForCron(config, cron).length === 0).map((cron) => `cron "${cron}" runs no job`);
  for (const { field, schedule } of workerSchedules(config)) {
    const trigger = toCloudflareCron(schedule, field);
    if (!crons.includes(trigger)) problems.push(`${field} "${schedule}" needs the cron trigger "${trigger}"`);
  }
  if (crons.length > 0 && typeof worker.scheduled !== 'function') problems.push('cron triggers need a scheduled handler');
  if (!config.data.redis.rest) problems.push('the Worker needs redis.rest in the deployment config');
  return problems;
}

function queueProblems(wrangler: WranglerConfig, config: DeploymentConfig, worker: WorkerExports): string[] {
  const producers = wrangler.queues?.producers ?? [];
  const consumed = new Set((wrangler.queues?.consumers ?? []).map((c) => c.queue));
  const produced = new Set(producers.map((p) => p.queue));
  const problems: string[] = [];
  for (const queue of consumed) if (!produced.has(queue)) problems.push(`queue "${queue}" is consumed but no producer binding sends to it`);
  for (const { binding, queue } of producers) {
    if (!consumed.has(queue)) problems.push(`producer binding ${binding} sends to queue "${queue}", which no consumer reads`);
  }
  const wakeUp = config.wakeUpTarget('cloudflare-queue');
  if (wakeUp && !producers.some((p) => p.binding === wakeUp.binding)) {
    problems.push(`wakeUp.binding ${wakeUp.binding} has no queue producer binding`);
  }
  if (wakeUpConsumers(config).length > 0 && consumed.size === 0) problems.push('wake-up consumers exist but no queue consumer is configured');
  if (consumed.size > 0 && typeof worker.queue !== 'function') problems.push('queue consumers need a queue handler');
  return problems;
}

export function checkWranglerConfig(wrangler: WranglerConfig, config: DeploymentConfig, worker: WorkerExports): string[] {
  const problems: string[] = [];
  if (typeof worker.fetch !== 'function') problems.push('the Worker exports no fetch handler');
  const date = wrangler.compatibility_date;
  if (!date || !/^\d{4}-\d{2}-\d{2}$/.test(date)) problems.push('compatibility_date must be YYYY-MM-DD');
  else if (date > MAX_COMPATIBILITY_DATE) problems.push(`compatibility_date ${date} is later than the pinned workerd supports (${MAX_COMPATIBILITY_DATE})`);
  problems.push(...scheduleProblems(wrangler, config, worker), ...queueProblems(wrangler, config, worker));
  const declared = [...(wrangler.secrets?.required ?? [])].sort();
  const needed = workerSecretNames(config);
  const missing = needed.filter((name) => !declared.includes(name));
  const extra = declared.filter((name) => !needed.includes(name));
  if (missing.length > 0) problems.push(`secrets.required lacks ${missing.join(', ')}`);
  if (extra.length > 0) problems.push(`secrets.required names ${extra.join(', ')}, which the Worker never reads`);
  return problems;
}
