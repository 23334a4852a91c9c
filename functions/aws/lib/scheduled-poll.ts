/**
 * Poll on an EventBridge schedule: the rule's input is a Scheduled Event whose `detail`
 * names the consumer (a bare `{"consumer": …}` works too, for a manual invoke). The run's
 * deadline is Lambda's remaining time minus POLL_RESERVE_MS; with too little time left
 * the handler throws RunDeadlineTooCloseError before anything reaches Redis.
 */
import type { Context, ScheduledEvent } from 'aws-lambda';
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { runPollJob, type PollJobReport } from '../../../src/deployment/jobs';
import { runLogLine } from '../../../src/deployment/log';
import { assertCanStart, pollDeadline } from './budget';
import { lambdaContainer, type ConsumerScope } from './container';
import { withDefaults, type LambdaDeps } from './deps';
import { problemLine } from './log-lines';
import { consumersOf } from './roles';

export interface PollDetail {
  readonly consumer: string;
}

export type ScheduledPollEvent = ScheduledEvent<PollDetail> | PollDetail;

function consumerNamed(event: ScheduledPollEvent): string {
  const name = 'detail' in event ? event.detail?.consumer : (event as PollDetail).consumer;
  if (typeof name !== 'string') throw new TypeError('the event names no consumer: expected detail.consumer (the rule input) or consumer');
  return name;
}

/** `scope`: the one consumer an isolated function polls (see roles.ts). */
export function createScheduledPollHandler(config: DeploymentConfig, deps: LambdaDeps = {}, scope?: ConsumerScope) {
  const resolved = withDefaults(deps);
  const only = scope?.consumer;
  const start = scope?.container ?? lambdaContainer(config, resolved, 'poll');
  const scheduled = new Map(consumersOf(config, 'poll', only).map((plan) => [plan.name, plan]));

  return async (event: ScheduledPollEvent, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<PollJobReport> => {
    const consumer = consumerNamed(event);
    const plan = scheduled.get(consumer);
    if (!plan) throw new TypeError(`${JSON.stringify(consumer)} is not a scheduled consumer of deployment ${config.name}`);
    try {
      assertCanStart(context.getRemainingTimeInMillis(), [plan.config]);
      const { runtime } = await start();
      const deadline = pollDeadline(resolved.now(), context.getRemainingTimeInMillis());
      const result = await runPollJob(runtime, consumer, { deadline });
      resolved.log(runLogLine(result, { deployment: config.name, emf: true, now: resolved.now }));
      return result;
    } catch (error) {
      resolved.log(problemLine({ deployment: config.name, job: 'poll', consumer, now: resolved.now }, error));
      throw error;
    }
  };
}
