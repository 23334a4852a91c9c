/**
 * The outbox relay on an EventBridge schedule (config `postgres.relay.schedule`; the rule's
 * input is `{"job": "relay"}`), run by the scheduled poll function (or, with isolated
 * consumers, a relay function of its own): publishes committed
 * outbox rows, then prunes old inbox and sent rows. Deadline as for a poll.
 */
import type { Context } from 'aws-lambda';
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { runRelayJob, type RelayJobReport } from '../../../src/deployment/jobs';
import { runLogLine } from '../../../src/deployment/log';
import { pollDeadline } from './budget';
import { lambdaContainer } from './container';
import { withDefaults, type LambdaDeps } from './deps';
import { problemLine } from './log-lines';

export interface RelayEvent {
  readonly job: 'relay';
}

/** A relay rule's input, bare or as a Scheduled Event's detail. */
export function isRelayEvent(event: unknown): boolean {
  const body = (typeof event === 'object' && event !== null && 'detail' in event ? (event as { detail: unknown }).detail : event) as Partial<RelayEvent> | null;
  return typeof body === 'object' && body !== null && body.job === 'relay';
}

export function createScheduledRelayHandler(config: DeploymentConfig, deps: LambdaDeps = {}) {
  const resolved = withDefaults(deps);
  // The relay's own secrets (a subset of the shared poll function's): it runs in either function.
  const start = lambdaContainer(config, resolved, 'relay');
  return async (_event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<RelayJobReport> => {
    try {
      const { runtime } = await start();
      const result = await runRelayJob(runtime, { deadline: pollDeadline(resolved.now(), context.getRemainingTimeInMillis()) });
      resolved.log(runLogLine(result, { deployment: config.name, now: resolved.now }));
      return result;
    } catch (error) {
      resolved.log(problemLine({ deployment: config.name, job: 'relay', now: resolved.now }, error));
      throw error;
    }
  };
}
