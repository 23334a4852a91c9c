/**
 * EventBridge rules: one per scheduled consumer, whose target input is a Scheduled Event
 * with `detail.consumer` naming the consumer (the poll handler reads it there), and one
 * for trim, and one for the outbox relay (input `{"job": "relay"}`, run by the poll
 * function). Schedules are the config's 5-field ones, rendered in EventBridge's form
 * (day-of-week 1-7 = SUN-SAT, `?` in one day field) by toEventBridgeCron.
 */
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import type { ConsumerPlan } from '../../src/deployment/define-config';
import { toEventBridgeCron } from '../../src/deployment/cron';

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
        targets: [new targets.LambdaFunction(fn, { event: pollEventInput(plan.name) })],
      }),
  );
}

export function trimSchedule(scope: Construct, deployment: string, fn: lambda.IFunction, cron: string): events.Rule {
  return new events.Rule(scope, 'TrimSchedule', {
    description: `${deployment}: trim, DLT retention, reaper and backlog metrics (${cron})`,
    schedule: events.Schedule.expression(toEventBridgeCron(cron, 'trim.schedule')),
    targets: [new targets.LambdaFunction(fn)],
  });
}

/** The outbox relay (config `postgres.relay.schedule`), run by the scheduled poll function. */
export function relaySchedule(scope: Construct, deployment: string, fn: lambda.IFunction, cron: string): events.Rule {
  return new events.Rule(scope, 'RelaySchedule', {
    description: `${deployment}: publish the Postgres outbox, prune old inbox and sent rows (${cron})`,
    schedule: events.Schedule.expression(toEventBridgeCron(cron, 'postgres.relay.schedule')),
    targets: [new targets.LambdaFunction(fn, { event: events.RuleTargetInput.fromObject({ job: 'relay' }) })],
  });
}
