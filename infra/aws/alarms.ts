/**
 * CloudWatch alarms, every one notifying the alarm topic. From the functions' Embedded
 * Metric Format lines (namespace SagaStreams, dimensions Deployment × Consumer):
 * - per consumer, from the backlog probe (every minute): oldest-pending age — missing data
 *   is breaching, so it is also the heartbeat of the probe (trim function down, Redis
 *   unreachable, the group gone) —, consumer lag, dead-letter growth;
 * - per consumer, from every poll run: deleted-pending, auth rejections;
 * - per scheduled consumer: "poller not running" (no poll run within twice its schedule's
 *   longest gap; missing data is breaching);
 * and from AWS metrics: per function errors and throttles; the wake-up queue's oldest
 * message age and its DLQ.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { closedAlertMsOf } from '../../src/consume/config';
import type { ConsumerPlan } from '../../src/deployment/define-config';
import { DIMENSION_CONSUMER, DIMENSION_DEPLOYMENT, METRIC_NAMESPACE, Metrics } from '../../functions/aws/lib/metrics';
import { longestGapMinutes } from './schedules';

/** Floor of the oldest-pending alarm; by default it is also at least 3 × the consumer's minIdleMs. */
export const DEFAULT_OLDEST_PENDING_ALARM_MS = 15 * 60_000;
export const DEFAULT_LAG_THRESHOLD = 1_000;
export const DEFAULT_WAKE_UP_QUEUE_AGE_S = 300;
/** Minutes of missing backlog metrics (or of an over-threshold age) before the heartbeat alarm fires. */
export const BACKLOG_EVALUATION_MINUTES = 3;
const PERIOD = Duration.minutes(5);
const MINUTE = Duration.minutes(1);
const DAY_MINUTES = 1_440;

export interface AlarmOptions {
  /** Alarm when the oldest pending entry is older than this (default: max(15 min, 3 × minIdleMs)). */
  readonly oldestPendingAgeMs?: number;
  /** Auth rejections per 5 minutes that raise the alarm (default 1). */
  readonly authRejectedThreshold?: number;
  /** Entries not yet delivered to a group, for 5 minutes in a row (default 1,000). */
  readonly lagThreshold?: number;
  /** Age of the oldest wake-up message in the queue (default 300 s). */
  readonly wakeUpQueueAgeSeconds?: number;
}

export interface AlarmTargets {
  readonly deployment: string;
  readonly consumers: readonly ConsumerPlan[];
  /** Backlog metrics exist only where the trim function runs. */
  readonly backlogProbed: boolean;
  readonly functions: Readonly<Partial<Record<string, lambda.IFunction>>>;
  /** The wake-up queue, or each isolated consumer's own. */
  readonly wakeUpQueues: ReadonlyArray<{ readonly consumer?: string; readonly queue: sqs.IQueue }>;
  readonly wakeUpDeadLetters?: sqs.IQueue;
  /** Notified by every alarm; undefined: no actions. */
  readonly topic?: sns.ITopic;
}

type AlarmProps = Omit<cloudwatch.AlarmProps, 'metric'>;

export class SagaAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, targets: AlarmTargets, options: AlarmOptions = {}) {
    super(scope, id);
    for (const plan of targets.consumers) this.#consumerAlarms(targets, plan, options);
    for (const { consumer, queue } of targets.wakeUpQueues) {
      const suffix = consumer === undefined ? '' : `-${consumer}`;
      this.#add(`WakeUpQueueAge${suffix}`, queue.metricApproximateAgeOfOldestMessage({ period: PERIOD, statistic: 'Maximum' }), {
        alarmName: `${targets.deployment}-wake-up-queue-age${suffix}`,
        alarmDescription: 'Wake-up messages wait in the queue: the wake-up function is throttled, failing or at its maximum concurrency',
        threshold: options.wakeUpQueueAgeSeconds ?? DEFAULT_WAKE_UP_QUEUE_AGE_S,
      });
    }
    if (targets.wakeUpDeadLetters) {
      this.#add('WakeUpDeadLetters', targets.wakeUpDeadLetters.metricApproximateNumberOfMessagesVisible({ period: PERIOD, statistic: 'Maximum' }), {
        alarmName: `${targets.deployment}-wake-up-dead-letters`,
        alarmDescription: 'Wake-up messages whose polls kept failing were parked in the DLQ',
        threshold: 1,
      });
    }
    for (const [role, fn] of Object.entries(targets.functions)) {
      this.#add(`${role}Errors`, fn!.metricErrors({ period: PERIOD, statistic: 'Sum' }), {
        alarmName: `${targets.deployment}-${role}-errors`,
        alarmDescription: `Invocations of the ${role} function failed (Redis unreachable, secrets unreadable, a run refused to start)`,
        threshold: 1,
      });
      this.#add(`${role}Throttles`, fn!.metricThrottles({ period: PERIOD, statistic: 'Sum' }), {
        alarmName: `${targets.deployment}-${role}-throttles`,
        alarmDescription: `Invocations of the ${role} function were throttled: its reserved concurrency is used up (a skipped scheduled run is not retried)`,
        threshold: 1,
      });
    }
    if (targets.topic) {
      const action = new actions.SnsAction(targets.topic);
      for (const alarm of this.alarms) alarm.addAlarmAction(action);
    }
  }

  #consumerAlarms(targets: AlarmTargets, plan: ConsumerPlan, options: AlarmOptions): void {
    const prefix = `${targets.deployment}-${plan.name}`;
    const metric = (name: string, statistic: string, period: Duration) =>
      new cloudwatch.Metric({
        namespace: METRIC_NAMESPACE,
        metricName: name,
        dimensionsMap: { [DIMENSION_DEPLOYMENT]: targets.deployment, [DIMENSION_CONSUMER]: plan.name },
        statistic,
        period,
      });
    if (targets.backlogProbed) {
      this.#add(`${plan.name}OldestPending`, metric(Metrics.oldestPendingAgeMs, 'Maximum', MINUTE), {
        alarmName: `${prefix}-oldest-pending-age`,
        alarmDescription:
          `Oldest pending entry of ${plan.name} (measured from its id) is older than expected — a stuck or failing handler — ` +
          'or no backlog metric arrived (the probe is not running, or cannot reach Redis or the group)',
        threshold: options.oldestPendingAgeMs ?? Math.max(DEFAULT_OLDEST_PENDING_ALARM_MS, 3 * plan.config.minIdleMs),
        evaluationPeriods: BACKLOG_EVALUATION_MINUTES,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      });
      this.#add(`${plan.name}Lag`, metric(Metrics.lag, 'Maximum', MINUTE), {
        alarmName: `${prefix}-lag`,
        alarmDescription: `Entries of ${plan.name}'s stream not yet delivered to its group: polls do not keep up`,
        threshold: options.lagThreshold ?? DEFAULT_LAG_THRESHOLD,
        evaluationPeriods: 5,
      });
      this.#add(
        `${plan.name}DeadLetterGrowth`,
        new cloudwatch.MathExpression({
          expression: 'DIFF(deadLetters)',
          usingMetrics: { deadLetters: metric(Metrics.deadLetters, 'Maximum', MINUTE) },
          period: MINUTE,
          label: `${plan.name} dead letters added`,
        }),
        {
          alarmName: `${prefix}-dead-letter-growth`,
          alarmDescription: `Entries of ${plan.name} were dead-lettered (the DLT grew): see \`saga-streams dlt list\``,
          threshold: 1,
        },
      );
      const closedAlertMs = closedAlertMsOf(plan.config);
      if (closedAlertMs !== undefined) {
        this.#add(`${plan.name}FlowClosedKeys`, metric(Metrics.flowClosedOverAge, 'Maximum', MINUTE), {
          alarmName: `${prefix}-flow-closed-keys`,
          alarmDescription:
            `A flow key of ${plan.name} stays closed behind its head entry longer than ${closedAlertMs} ms (config flow.closedAlertMs): ` +
            'a stuck saga instance — see `saga-streams backlog` for the key and its head',
          threshold: 1,
          evaluationPeriods: BACKLOG_EVALUATION_MINUTES,
        });
      }
    }
    if (plan.schedule !== undefined) {
      const periodMinutes = Math.min(DAY_MINUTES, Math.max(5, 2 * longestGapMinutes(plan.schedule)));
      this.#add(`${plan.name}NotRunning`, metric(Metrics.durationMs, 'SampleCount', Duration.minutes(periodMinutes)), {
        alarmName: `${prefix}-not-running`,
        alarmDescription: `No poll run of ${plan.name} reported in ${periodMinutes} minutes (schedule ${plan.schedule}): the poller is not running`,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      });
    }
    this.#add(`${plan.name}DeletedPending`, metric(Metrics.deletedPending, 'Sum', PERIOD), {
      alarmName: `${prefix}-deleted-pending`,
      alarmDescription: `Entries of ${plan.name} were deleted from the stream before being acked`,
      threshold: 1,
    });
    this.#add(`${plan.name}AuthRejected`, metric(Metrics.authRejected, 'Sum', PERIOD), {
      alarmName: `${prefix}-auth-rejected`,
      alarmDescription: `Entries of ${plan.name} failed origin checks (signature, key id) and were dead-lettered`,
      threshold: options.authRejectedThreshold ?? 1,
    });
  }

  #add(id: string, metric: cloudwatch.IMetric, props: Partial<AlarmProps> & Pick<AlarmProps, 'threshold'>): void {
    this.alarms.push(
      new cloudwatch.Alarm(this, id, {
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        ...props,
        metric,
      }),
    );
  }
}
