/**
 * EventBridge rules: one per scheduled consumer, whose target input is a Scheduled Event
 * with `detail.consumer` naming the consumer (the poll handler reads it there), and one
 * for trim, and one for the outbox relay (input `{"job": "relay"}`, run by the poll
 * function). Schedules are the config's 5-field ones, rendered in EventBridge's form
 * (day-of-week 1-7 = SUN-SAT, `?` in one day field) by toEventBridgeCron.
 *
 * Every target has 0 retries and a 60 s maximum event age (EventBridge's floor): a failed or
 * throttled minute-poll must not be retried into the next one (overlapping runs), and the
 * next tick polls anyway. The trim function also runs the backlog probe alone every minute
 * (input `{"job":"backlog"}`), so the backlog metrics — and their alarms — are per minute.
 */
import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { ConsumerPlan } from '../../src/deployment/define-config';
import { toEventBridgeCron } from '../../src/deployment/cron';
import { scheduleFirings } from '../../src/deployment/schedule-clock';

/** Input of the every-minute backlog-probe rule on the trim function. */
export const BACKLOG_PROBE_INPUT = { job: 'backlog' } as const;
export const BACKLOG_PROBE_SCHEDULE = '* * * * *';

function target(fn: lambda.IFunction, event?: events.RuleTargetInput): targets.LambdaFunction {
  return new targets.LambdaFunction(fn, { event, retryAttempts: 0, maxEventAge: Duration.seconds(60) });
}

/**
 * The longest wait between two firings of `cron`, in whole minutes, capped at a day (a
 * CloudWatch alarm evaluates at most a day): the period of a "not running" alarm.
 */
export function longestGapMinutes(cron: string): number {
  const from = new Date(Date.UTC(2026, 0, 5)); // a Monday; eight days cover every weekly pattern
  const firings = scheduleFirings(cron, from, new Date(from.getTime() + 8 * 86_400_000)).map((d) => d.getTime());
  let gap = firings.length > 1 ? 0 : 1_440;
  for (let i = 1; i < firings.length; i += 1) gap = Math.max(gap, (firings[i]! - firings[i - 1]!) / 60_000);
  return Math.min(1_440, Math.max(1, Math.ceil(gap)));
}

/** The Scheduled Event EventBridge would send, with the consumer in `detail`. */
export function pollEventInput(consumer: string): events.RuleTargetInput {
  return events.RuleTargetInput.fromObject({
    version: '0',
    id: events.EventField.eventId,
    'detail-type': events.EventField.detailType,
    source: events.EventField.source,
    account: events.EventField.account,
    time: events.EventField.time,
    region: events.EventField.region,
    resources: events.EventField.fromPath('$.resources'),
    detail: { consumer },
  });
}

export function pollSchedules(scope: Construct, deployment: string, fn: lambda.IFunction, plans: readonly ConsumerPlan[]): events.Rule[] {
  return plans.map(
    (plan) =>
      new events.Rule(scope, `PollSchedule-${plan.name}`, {
        description: `${deployment}: poll consumer ${plan.name} (${plan.schedule})`,
        schedule: events.Schedule.expression(toEventBridgeCron(plan.schedule!, `consumers.${plan.name}.schedule`)),
        targets: [target(fn, pollEventInput(plan.name))],
      }),
  );
}

export function trimSchedule(scope: Construct, deployment: string, fn: lambda.IFunction, cron: string): events.Rule {
  return new events.Rule(scope, 'TrimSchedule', {
    description: `${deployment}: trim, DLT retention, reaper and backlog metrics (${cron})`,
    schedule: events.Schedule.expression(toEventBridgeCron(cron, 'trim.schedule')),
    targets: [target(fn)],
  });
}

/** The outbox relay (config `postgres.relay.schedule`), run by the scheduled poll function. */
export function relaySchedule(scope: Construct, deployment: string, fn: lambda.IFunction, cron: string): events.Rule {
  return new events.Rule(scope, 'RelaySchedule', {
    description: `${deployment}: publish the Postgres outbox, prune old inbox and sent rows (${cron})`,
    schedule: events.Schedule.expression(toEventBridgeCron(cron, 'postgres.relay.schedule')),
    targets: [target(fn, events.RuleTargetInput.fromObject({ job: 'relay' }))],
  });
}

/** The backlog probe alone, every minute, on the trim function: per-minute backlog metrics. */
export function backlogProbeSchedule(scope: Construct, deployment: string, fn: lambda.IFunction): events.Rule {
  return new events.Rule(scope, 'BacklogProbeSchedule', {
    description: `${deployment}: backlog probe of every consumer as metrics (every minute)`,
    schedule: events.Schedule.expression(toEventBridgeCron(BACKLOG_PROBE_SCHEDULE)),
    targets: [target(fn, events.RuleTargetInput.fromObject(BACKLOG_PROBE_INPUT))],
  });
}
