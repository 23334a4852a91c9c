/**
 * The overview: every consumer's backlog now (the SPEC §8 probe: pending, oldest pending age,
 * lag, dead letters), its throughput over the recent samples, when its poller last recorded a
 * run (alive or not), and its oldest-pending-age chart over the recorded history. Consumers are read in parallel, one probe and one history read
 * each, so a slow Redis costs one round trip of time, not one per consumer.
 */
import type { DeploymentRuntime } from '../deployment/runtime';
import { consumerBacklog, type ConsumerBacklog } from '../deployment/consumer-backlog';
import { ageChart } from './chart';
import type { RunRecord } from '../deployment/run-history';
import { duration, escapeHtml, table } from './html';
import { lastRunAt, readConsumerHistory, type Sample } from './read-history';
import { IDLE_RECORD_SECONDS } from '../deployment/schema';
import { runsTable } from './runs';
import { DUE_SAMPLE, type Backlog } from '../probes/backlog';

/** Keys the flow table names as waiting on a limit (the probe's sample may hold more). */
const LIMITED_KEYS_SHOWN = 5;

/** Throughput is the acks of the samples within this window, per minute. */
export const THROUGHPUT_WINDOW_MS = 5 * 60_000;

export interface ConsumerOverview {
  readonly backlog: ConsumerBacklog;
  /** Acked per minute over the last THROUGHPUT_WINDOW_MS of samples (Redis clock). */
  readonly ackedPerMinute: number;
  /** How long ago the poller last recorded a run (see lastRunAt); undefined when none is recorded. */
  readonly lastRunAgoMs: number | undefined;
  readonly samples: readonly Sample[];
}

export interface Overview {
  readonly deployment: string;
  /** An idle run is recorded at most this often per process (`publishApi.dashboard.idleRecordSeconds`). */
  readonly idleRecordSeconds: number;
  readonly consumers: readonly ConsumerOverview[];
  /** The latest poll runs that did something, newest first (the runs page lists them all). */
  readonly recentRuns: readonly RunRecord[];
}

/** Runs the overview lists. */
export const OVERVIEW_RUNS = 10;

function throughput(samples: readonly Sample[], now: number): number {
  const recent = samples.filter((s) => s.t > now - THROUGHPUT_WINDOW_MS);
  const acked = recent.reduce((sum, s) => sum + s.acked, 0);
  return Math.round((acked / (THROUGHPUT_WINDOW_MS / 60_000)) * 10) / 10;
}

export async function readOverview(runtime: DeploymentRuntime): Promise<Overview> {
  const read = await Promise.all(
    [...runtime.config.consumers.values()].map(async (plan) => {
      const [backlog, history] = await Promise.all([consumerBacklog(runtime.port, plan), readConsumerHistory(runtime.port, plan)]);
      const now = backlog.status === 'ok' ? backlog.observedAtMs : runtime.now();
      const last = lastRunAt(history);
      const lastRunAgoMs = last === undefined ? undefined : Math.max(0, now - last);
      return { consumer: { backlog, ackedPerMinute: throughput(history.samples, now), lastRunAgoMs, samples: history.samples }, runs: history.runs };
    }),
  );
  const recentRuns = read.flatMap((r) => r.runs).sort((a, b) => b.t - a.t).slice(0, OVERVIEW_RUNS);
  const idleRecordSeconds = runtime.config.data.publishApi?.dashboard?.idleRecordSeconds ?? IDLE_RECORD_SECONDS;
  return { deployment: runtime.config.name, idleRecordSeconds, consumers: read.map((r) => r.consumer), recentRuns };
}

function backlogRow({ backlog: b, ackedPerMinute, lastRunAgoMs }: ConsumerOverview) {
  const name = { html: `<a href="#c-${escapeHtml(b.consumer)}">${escapeHtml(b.consumer)}</a>` };
  const lastRun = lastRunAgoMs === undefined ? { html: '<span class="muted">none recorded</span>' } : `${duration(lastRunAgoMs)} ago`;
  if (b.status !== 'ok') return [name, b.stream, b.group, { html: '<span class="muted">no group yet</span>' }, '', '', '', '', '', lastRun, ''];
  const deadLetters = b.deadLetters > 0 ? { html: `<span class="error">${b.deadLetters}</span>`, numeric: true } : 0;
  return [name, b.stream, b.group, b.streamLength, b.pending, duration(b.oldestPendingAgeMs), nextDue(b), b.lag ?? '?', ackedPerMinute, lastRun, deadLetters];
}

/** When the next pending entry of the probe's sample is due (retry backoff, deferral, minIdle), and how many already are. */
function nextDue(b: { nextDueInMs?: number; dueNow?: number }): string {
  const waiting = b.nextDueInMs === undefined ? '—' : `in ${duration(b.nextDueInMs)}`;
  return b.dueNow ? `${b.dueNow} due now; next ${waiting}` : waiting;
}

/**
 * Flow control (SPEC §5.7), for consumers with keys leased or waited on or a full rate limit:
 * the keys closed behind a head (strict order) with the head's id and age, the busiest keys of
 * the probe's sample, and what waits on a rate limit or a handler's hold.
 */
function flowTable(consumers: readonly ConsumerOverview[]): string {
  const rows = consumers.flatMap(({ backlog: b }) => {
    if (b.status !== 'ok' || b.flow === undefined) return [];
    const groupFull = (b.rateLimitRoomInMs ?? 0) > 0;
    if (b.flow.keys === 0 && b.flow.waiting === 0 && !groupFull) return [];
    const stuck = b.flow.closedOverAge > 0 ? `${b.flow.closedOverAge} past flow.closedAlertMs (stuck?) — ` : '';
    const closed = stuck + b.flow.closedKeys.map((k) => `${k.key}: head ${k.headId}, ${duration(k.headAgeMs)}, ${k.waiting} waiting`).join('; ');
    const busiest = b.flow.busiestKeys.map((k) => `${k.key} (${k.waiting})`).join(', ');
    return [[b.consumer, b.flow.keys, b.flow.waiting, b.flow.readyKeys, closed || '—', busiest || '—', waitingOnLimit(b)]];
  });
  if (rows.length === 0) return '';
  return `<h2>Flow control</h2>${table(['consumer', 'keys leased or waited on', 'entries waiting', 'ready keys', 'closed keys (strict order)', 'busiest keys', 'waiting on a limit'], rows, '')}`;
}

/** The group's full bucket, or the sampled keys whose own limit or hold has no room, with when it frees. */
function waitingOnLimit(b: Pick<Backlog, 'flow' | 'rateLimitRoomInMs'>): string {
  const group = (b.rateLimitRoomInMs ?? 0) > 0 ? `group limit full, room in ${duration(b.rateLimitRoomInMs!)}` : '';
  const limited = b.flow?.limitedKeys ?? [];
  const keys = limited.length === 0 ? '' : `${b.flow!.waitingOnLimit} entries: ${limited.slice(0, LIMITED_KEYS_SHOWN).map((k) => `${k.key} (${k.waiting}, room in ${duration(k.roomInMs)})`).join(', ')}`;
  return [group, keys].filter((part) => part !== '').join('; ') || '—';
}

/** `runsHref`: the runs page, which lists idle runs and filters too. */
export function renderOverview(overview: Overview, runsHref: string): string {
  const summary = table(
    ['consumer', 'stream', 'group', 'length', 'pending', 'oldest pending', 'next due', 'lag', 'acked / min (5 min)', 'last run', 'dead letters'],
    overview.consumers.map(backlogRow),
    'this deployment has no consumers',
  );
  const idleRuns = overview.idleRecordSeconds === 0 ? 'idle runs too' : `idle runs at most every ${duration(overview.idleRecordSeconds * 1000)} per process, so a live poller's last run is never older than that plus its schedule's period`;
  const lastRunNote =
    `<p class="muted">Last run: the newest run the consumer's poller recorded. Runs that did something are recorded at once, ${idleRuns}. ` +
    `Next due: when the first of the ${DUE_SAMPLE} oldest pending entries becomes due for redelivery (its retry backoff, its deferral, or minIdle for one in a handler's hands).</p>`;
  const charts = overview.consumers
    .map(({ backlog, samples }) => {
      const points = samples.map((s) => ({ t: s.t, value: s.ageMs ?? 0 }));
      const chart = ageChart(`oldest pending age of ${backlog.consumer}`, points);
      return `<div class="card" id="c-${escapeHtml(backlog.consumer)}"><strong>${escapeHtml(backlog.consumer)}</strong> <span class="muted">oldest pending age · ${samples.length} samples</span><br>${chart}</div>`;
    })
    .join('');
  const runs = `<h2>Recent runs that did something</h2>${runsTable(overview.recentRuns, 'no poll run has handled anything yet')}<p><a href="${escapeHtml(runsHref)}">All recent runs, idle ones and filters →</a></p>`;
  return `${summary}${lastRunNote}${flowTable(overview.consumers)}<h2>Oldest pending age over time</h2>${charts}${runs}`;
}
