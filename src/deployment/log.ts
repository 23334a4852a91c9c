/**
 * One structured JSON line per run (SPEC §8), low-cardinality; optionally in CloudWatch
 * Embedded Metric Format so alarms can be built from the log without a metrics client.
 */
import { COUNTERS } from '../report';
import type { PollJobReport, RelayJobReport, TrimJobReport } from './jobs';

export const METRIC_NAMESPACE = 'SagaStreams';

export type JobReport = PollJobReport | TrimJobReport | RelayJobReport;

export interface LogOptions {
  readonly deployment: string;
  /** Emit CloudWatch Embedded Metric Format (`_aws`) alongside the fields. */
  readonly emf?: boolean;
  readonly now?: () => number;
}

// Every run counter but the handler time sum (logged as a plain field), and the duration.
const POLL_METRICS = [...COUNTERS.filter((name) => name !== 'handlerMicrosSum'), 'durationMs'] as const;

export function runLogLine(result: JobReport, options: LogOptions): string {
  const timestamp = (options.now ?? Date.now)();
  if (result.job === 'relay') {
    const { relay, pruned } = result;
    const level = relay.refused > 0 ? 'error' : 'info';
    return JSON.stringify({ level, msg: 'relay run', deployment: options.deployment, job: 'relay', timestamp, ...relay, ...pruned });
  }
  if (result.job === 'trim') {
    const removed = result.streams.reduce((sum, s) => sum + s.retention.stream.removed, 0);
    const deadLettersRemoved = result.streams.reduce((sum, s) => sum + s.retention.deadLetters.removed, 0);
    const consumersReaped = result.streams.reduce((sum, s) => sum + s.retention.consumers.deleted.length, 0);
    return JSON.stringify({
      level: 'info',
      msg: 'trim run',
      deployment: options.deployment,
      job: 'trim',
      timestamp,
      removed,
      deadLettersRemoved,
      consumersReaped,
      streams: result.streams.map((s) => ({ stream: s.name, status: s.retention.stream.status, removed: s.retention.stream.removed })),
    });
  }
  const { report } = result;
  const fields: Record<string, unknown> = {
    // Deleted-pending entries and handler contract errors are bugs or data loss to look at.
    level: report.deletedPending > 0 || report.handlerContractErrors > 0 ? 'warn' : 'info',
    msg: 'poll run',
    deployment: options.deployment,
    job: 'poll',
    consumer: result.consumer,
    stream: result.stream,
    group: result.group,
    timestamp,
    rounds: report.rounds,
    stoppedForDeadline: report.stoppedForDeadline,
    handlerMicrosSum: report.handlerMicrosSum,
  };
  for (const metric of POLL_METRICS) fields[metric] = report[metric];
  if (options.emf) {
    fields._aws = {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: METRIC_NAMESPACE,
          Dimensions: [['Deployment', 'Consumer']],
          Metrics: POLL_METRICS.map((name) => ({ Name: name, Unit: name === 'durationMs' ? 'Milliseconds' : 'Count' })),
        },
      ],
    };
    fields.Deployment = options.deployment;
    fields.Consumer = result.consumer;
  }
  return JSON.stringify(fields);
}
