/**
 * CloudWatch alarms from the functions' Embedded Metric Format lines (namespace
 * SagaStreams, dimensions Deployment × Consumer): per consumer, oldest-pending age (the
 * trim function's backlog probe), deleted-pending and auth rejections (every poll run);
 * plus wake-ups parked in the DLQ and failed invocations.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ConsumerPlan } from '../../src/deployment/define-config';
import { DIMENSION_CONSUMER, DIMENSION_DEPLOYMENT, METRIC_NAMESPACE, Metrics } from '../../functions/aws/lib/metrics';

/** Floor of the oldest-pending alarm; by default it is also at least 3 × the consumer's minIdleMs. */
export const DEFAULT_OLDEST_PENDING_ALARM_MS = 15 * 60_000;
const PERIOD = Duration.minutes(5);

export interface AlarmOptions {
  /** Alarm when the oldest pending entry is older than this (default: max(15 min, 3 × minIdleMs)). */
  readonly oldestPendingAgeMs?: number;
  /** Auth rejections per 5 minutes that raise the alarm (default 1). */
  readonly authRejectedThreshold?: number;
  /** SNS topic notified on alarm. */
  readonly topicArn?: string;
}

export interface AlarmTargets {
  readonly deployment: string;
  readonly consumers: readonly ConsumerPlan[];
  /** Backlog metrics exist only where the trim function runs. */
  readonly backlogProbed: boolean;
  readonly functions: Readonly<Partial<Record<string, lambda.IFunction>>>;
  readonly wakeUpDeadLetters?: sqs.IQueue;
}

export class SagaAlarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, targets: AlarmTargets, options: AlarmOptions = {}) {
    super(scope, id);
    const metric = (name: string, consumer: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: METRIC_NAMESPACE,
        metricName: name,
        dimensionsMap: { [DIMENSION_DEPLOYMENT]: targets.deployment, [DIMENSION_CONSUMER]: consumer },
        statistic,
        period: PERIOD,
      });
    for (const plan of targets.consumers) {
      const prefix = `${targets.deployment}-${plan.name}`;
      if (targets.backlogProbed) {
        this.#add(`${plan.name}OldestPending`, metric(Metrics.oldestPendingAgeMs, plan.name, 'Maximum'), {
          alarmName: `${prefix}-oldest-pending-age`,
          alarmDescription: `Oldest pending entry of ${plan.name} (measured from its id) is older than expected: stuck or failing handler`,
          threshold: options.oldestPendingAgeMs ?? Math.max(DEFAULT_OLDEST_PENDING_ALARM_MS, 3 * plan.config.minIdleMs),
          // Emitted once per trim run, which may be rarer than the period: keep the state between runs.
          treatMissingData: cloudwatch.TreatMissingData.IGNORE,
        });
      }
      this.#add(`${plan.name}DeletedPending`, metric(Metrics.deletedPending, plan.name, 'Sum'), {
        alarmName: `${prefix}-deleted-pending`,
        alarmDescription: `Entries of ${plan.name} were deleted from the stream before being acked`,
        threshold: 1,
      });
      this.#add(`${plan.name}AuthRejected`, metric(Metrics.authRejected, plan.name, 'Sum'), {
        alarmName: `${prefix}-auth-rejected`,
        alarmDescription: `Entries of ${plan.name} failed origin checks (signature, key id) and were dead-lettered`,
        threshold: options.authRejectedThreshold ?? 1,
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
    }
    if (options.topicArn) {
      const topic = sns.Topic.fromTopicArn(this, 'Topic', options.topicArn);
      for (const alarm of this.alarms) alarm.addAlarmAction(new actions.SnsAction(topic));
    }
  }

  #add(id: string, metric: cloudwatch.IMetric, props: Omit<cloudwatch.AlarmProps, 'metric' | 'evaluationPeriods'>): void {
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
