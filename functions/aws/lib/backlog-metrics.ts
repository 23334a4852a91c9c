/**
 * The backlog probe of one consumer as a log line in Embedded Metric Format, so CloudWatch
 * holds oldest-pending age, pending count, lag and DLT size per consumer and an alarm can
 * watch them. No pending entries reads as age 0; an unknown lag is left out, not zeroed.
 */
import type { Backlog } from '../../../src/probes/backlog';
import { DIMENSION_CONSUMER, DIMENSION_DEPLOYMENT, METRIC_NAMESPACE, Metrics } from './metrics';

export interface BacklogLineOptions {
  readonly deployment: string;
  readonly consumer: string;
  readonly stream: string;
  readonly group: string;
  readonly now: () => number;
}

export function backlogLogLine(backlog: Backlog, options: BacklogLineOptions): string {
  const timestamp = options.now();
  const values: Record<string, number> = {
    [Metrics.pending]: backlog.pending,
    [Metrics.oldestPendingAgeMs]: backlog.oldestPendingAgeMs ?? 0,
    [Metrics.deadLetters]: backlog.deadLetters,
    [Metrics.consumers]: backlog.consumers,
    ...(backlog.lag === null ? {} : { [Metrics.lag]: backlog.lag }),
  };
  return JSON.stringify({
    level: 'info',
    msg: 'backlog',
    deployment: options.deployment,
    job: 'backlog',
    consumer: options.consumer,
    stream: options.stream,
    group: options.group,
    timestamp,
    ...values,
    oldestPendingDeliveries: backlog.oldestPendingDeliveries ?? 0,
    [DIMENSION_DEPLOYMENT]: options.deployment,
    [DIMENSION_CONSUMER]: options.consumer,
    _aws: {
      Timestamp: timestamp,
      CloudWatchMetrics: [
        {
          Namespace: METRIC_NAMESPACE,
          Dimensions: [[DIMENSION_DEPLOYMENT, DIMENSION_CONSUMER]],
          Metrics: Object.keys(values).map((name) => ({ Name: name, Unit: name === Metrics.oldestPendingAgeMs ? 'Milliseconds' : 'Count' })),
        },
      ],
    },
  });
}
