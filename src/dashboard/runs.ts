/**
 * Recent runs, as the runs recorded them in Redis (history.ts): the runs that did something
 * first, newest first, then the idle ones — so a quiet hour of cron ticks never hides the run
 * that dead-lettered. Filterable by consumer, job and level (query parameters).
 */
import type { DeploymentRuntime } from '../deployment/runtime';
import { isIdleRun, type RunRecord } from '../deployment/run-history';
import { escapeHtml, isoTime, table } from './html';
import { readConsumerHistory, readJobRuns } from './read-history';

export interface RunFilter {
  readonly consumer?: string;
  readonly job?: string;
  readonly level?: string;
}

export interface RecentRuns {
  readonly active: readonly RunRecord[];
  readonly idle: readonly RunRecord[];
}

const newestFirst = (a: RunRecord, b: RunRecord) => b.t - a.t;

export async function readRecentRuns(runtime: DeploymentRuntime, filter: RunFilter): Promise<RecentRuns> {
  const plans = [...runtime.config.consumers.values()].filter((plan) => !filter.consumer || plan.name === filter.consumer);
  const wantsJobs = !filter.consumer && filter.job !== 'poll';
  const [histories, jobRuns] = await Promise.all([
    Promise.all(plans.map((plan) => readConsumerHistory(runtime.port, plan))),
    wantsJobs ? readJobRuns(runtime.port, runtime.config.name) : Promise.resolve([]),
  ]);
  const matches = (run: RunRecord) => (!filter.job || run.job === filter.job) && (!filter.level || run.level === filter.level);
  const active = [...histories.flatMap((h) => h.runs), ...jobRuns.filter((run) => !isIdleRun(run))].filter(matches).sort(newestFirst);
  const idle = [...histories.flatMap((h) => h.idleRuns), ...jobRuns.filter(isIdleRun)].filter(matches).sort(newestFirst);
  return { active, idle };
}

function rows(runs: readonly RunRecord[]) {
  return runs.map((r) => [
    isoTime(r.t).replace('T', ' ').slice(0, 19),
    r.job,
    r.consumer ?? '',
    { html: `<span class="${escapeHtml(r.level)}">${escapeHtml(r.level)}</span>` },
    r.acked ?? r.published ?? r.removed ?? '',
    r.deadLettered ?? '',
    r.retained ?? '',
    r.reclaimed ?? '',
    r.durationMs ?? '',
    r.stoppedForDeadline ? 'deadline' : (r.error ?? ''),
  ]);
}

const HEADERS = ['time (UTC)', 'job', 'consumer', 'level', 'acked / published / removed', 'dead-lettered', 'retained', 'reclaimed', 'ms', 'note'];

export function runsTable(runs: readonly RunRecord[], empty: string): string {
  return table(HEADERS, rows(runs), empty);
}

function select(name: string, options: readonly string[], current: string | undefined): string {
  const items = ['', ...options].map((o) => `<option value="${escapeHtml(o)}"${o === (current ?? '') ? ' selected' : ''}>${escapeHtml(o || `any ${name}`)}</option>`);
  return `<select name="${name}">${items.join('')}</select>`;
}

export function renderRuns(runs: RecentRuns, consumers: readonly string[], filter: RunFilter, action: string): string {
  const form =
    `<form method="get" action="${escapeHtml(action)}">` +
    `${select('consumer', consumers, filter.consumer)} ${select('job', ['poll', 'trim', 'relay'], filter.job)} ${select('level', ['info', 'warn', 'error'], filter.level)} ` +
    `<button type="submit">Filter</button></form>`;
  return `${form}<h2>Runs that did something</h2>${runsTable(runs.active, 'no run matched')}<h2>Idle runs</h2>${runsTable(runs.idle, 'no idle run matched')}`;
}
