/**
 * One structured JSON line per run (SPEC §8), low-cardinality, in the schema of
 * log-line.ts; optionally in CloudWatch Embedded Metric Format so alarms can be built from
 * the log without a metrics client.
 */
import { COUNTERS } from '../consume/report';
import type { Backlog } from '../probes/backlog';
import type { PollJobReport, RelayJobReport, TrimJobReport } from './jobs';
import { formatLogLine, type CounterField, type Counters, type EmfSpec } from './log-line';

export const METRIC_NAMESPACE = 'SagaStreams';
export const DIMENSION_DEPLOYMENT = 'Deployment';
export const DIMENSION_CONSUMER = 'Consumer';

export type JobReport = PollJobReport | TrimJobReport | RelayJobReport;

export interface LogOptions {
  readonly deployment: string;
  /** Emit CloudWatch Embedded Metric Format (`_aws`) alongside the fields. */
  readonly emf?: boolean;
  readonly now?: () => number;
}

// Every run counter but the handler time sum (logged as a plain field), and the duration.
const POLL_METRICS = [...COUNTERS.filter((name) => name !== 'handlerMicrosSum'), 'durationMs'] as const;

function emfFor(deployment: string, consumer: string, metrics: readonly CounterField[]): EmfSpec {
  return {
    namespace: METRIC_NAMESPACE,
    dimensions: { [DIMENSION_DEPLOYMENT]: deployment, [DIMENSION_CONSUMER]: consumer },
    metrics: metrics.map((name) => ({ name, unit: name === 'durationMs' || name === 'oldestPendingAgeMs' ? 'Milliseconds' : 'Count' })),
  };
}

export function runLogLine(result: JobReport, options: LogOptions): string {
  const timestamp = (options.now ?? Date.now)();
  const { deployment } = options;
  if (result.job === 'relay') {
    const { relay, pruned } = result;
    return formatLogLine({ level: relay.refused > 0 ? 'error' : 'info', msg: 'relay run', deployment, job: 'relay', timestamp, counters: { ...relay, ...pruned } });
  }
  if (result.job === 'trim') {
    const sum = (pick: (s: TrimJobReport['streams'][number]) => number) => result.streams.reduce((total, s) => total + pick(s), 0);
    return formatLogLine({
      level: 'info',
      msg: 'trim run',
      deployment,
      job: 'trim',
      timestamp,
      counters: {
        removed: sum((s) => s.retention.stream.removed),
        deadLettersRemoved: sum((s) => s.retention.deadLetters.removed),
        consumersReaped: sum((s) => s.retention.consumers.deleted.length),
        scheduledMoved: sum((s) => s.retention.schedule.moved),
      },
      detail: { streams: result.streams.map((s) => ({ stream: s.name, status: s.retention.stream.status, removed: s.retention.stream.removed })) },
    });
  }
  const { report } = result;
  const counters: Counters = { rounds: report.rounds, handlerMicrosSum: report.handlerMicrosSum };
  for (const metric of POLL_METRICS) counters[metric] = report[metric];
  return formatLogLine({
    // Deleted-pending entries and handler contract errors are bugs or data loss to look at; an
    // unconfirmed settle durability, replicas or an AOF that did not keep up.
    level: report.deletedPending > 0 || report.handlerContractErrors > 0 || report.settledUnconfirmed > 0 || report.flowLeaseLost > 0 ? 'warn' : 'info',
    msg: 'poll run',
    deployment,
    job: 'poll',
    consumer: result.consumer,
    stream: result.stream,
    group: result.group,
    timestamp,
    stoppedForDeadline: report.stoppedForDeadline,
    counters,
    // A time, not a counter: when the earliest pending entry the run saw waiting is due (Redis clock).
    ...(report.nextDueAt === undefined ? {} : { detail: { nextDueAt: report.nextDueAt } }),
    emf: options.emf ? emfFor(deployment, result.consumer, POLL_METRICS) : undefined,
  });
}

export interface BacklogLineOptions {
  readonly deployment: string;
  readonly consumer: string;
  readonly stream: string;
  readonly group: string;
  readonly now: () => number;
  /** Emit CloudWatch Embedded Metric Format, so alarms can watch each value per consumer. */
  readonly emf?: boolean;
}

/** Closed keys a warning names at most (the backlog probe's sample holds more). */
const CLOSED_KEYS_NAMED = 5;

/**
 * The backlog probe of one consumer (msg `backlog`): pending, oldest pending age, lag,
 * dead letters, and with flow control the keys closed past their alert age and the entries
 * waiting on a limit. No pending entries reads as age 0; an unknown lag is left out, not
 * zeroed. A key closed past its alert age makes the line a warning naming the oldest ones (a
 * stuck saga instance, SPEC §5.7).
 */
export function backlogLogLine(backlog: Backlog, options: BacklogLineOptions): string {
  const flow = backlog.flow;
  const metrics: Counters = {
    pending: backlog.pending,
    oldestPendingAgeMs: backlog.oldestPendingAgeMs ?? 0,
    deadLetters: backlog.deadLetters,
    consumers: backlog.consumers,
    ...(backlog.lag === null ? {} : { lag: backlog.lag }),
    ...(flow === undefined ? {} : { flowClosedOverAge: flow.closedOverAge }),
  };
  // Sampled figures, in the line but no metric: entries of keys waiting on their own limit, and
  // when a group-wide limit next has room.
  const counters = {
    ...metrics,
    oldestPendingDeliveries: backlog.oldestPendingDeliveries ?? 0,
    ...(flow === undefined ? {} : { flowWaitingOnLimit: flow.waitingOnLimit }),
    ...(backlog.rateLimitRoomInMs === undefined ? {} : { rateLimitRoomInMs: backlog.rateLimitRoomInMs }),
  };
  if (flow === undefined || flow.closedOverAge === 0) return backlogLine(options, counters, Object.keys(metrics) as CounterField[]);
  // The keys past the alert age are the oldest closed ones: name those, and no younger one.
  const oldest = [...flow.closedKeys].sort((a, b) => b.headAgeMs - a.headAgeMs).slice(0, Math.min(CLOSED_KEYS_NAMED, flow.closedOverAge));
  const detail = { closedOverAge: oldest.map(({ key, headId, headAgeMs }) => ({ key, headId, headAgeMs })) };
  return backlogLine(options, counters, Object.keys(metrics) as CounterField[], detail, 'warn');
}

/**
 * The backlog line of a consumer whose group does not exist yet (no run has created it):
 * nothing was delivered, so nothing is pending — age 0, not a missing metric, or the
 * oldest-pending alarm (missing data breaching) would fire on a healthy new deployment.
 */
export function missingGroupLogLine(options: BacklogLineOptions): string {
  const metrics: Counters = { pending: 0, oldestPendingAgeMs: 0, consumers: 0 };
  return backlogLine(options, metrics, Object.keys(metrics) as CounterField[], { group: 'not created yet' });
}

/** One backlog line; `metricNames` are the counters published as CloudWatch metrics when EMF is on. */
function backlogLine(options: BacklogLineOptions, counters: Counters, metricNames: CounterField[], detail?: Record<string, unknown>, level: 'info' | 'warn' = 'info'): string {
  return formatLogLine({
    level,
    msg: 'backlog',
    deployment: options.deployment,
    job: 'backlog',
    consumer: options.consumer,
    stream: options.stream,
    group: options.group,
    timestamp: options.now(),
    counters,
    ...(detail ? { detail } : {}),
    emf: options.emf ? emfFor(options.deployment, options.consumer, metricNames) : undefined,
  });
}
