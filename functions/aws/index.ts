/**
 * `saga-streams/aws`: the Lambda handlers of a deployment, built from the user's config.
 *
 * @example
 * // src/saga.ts
 * export default defineConfig({ ... });
 * // src/lambda.ts
 * import config from './saga';
 * export const { poll, trim, publish, wakeUp } = createLambdaHandlers(config);
 *
 * The CDK construct (`saga-streams/cdk`) generates such a file from the module it is given.
 */
import type { DeploymentConfig } from '../../src/deployment/define-config';
import type { RelayJobReport } from '../../src/deployment/jobs';
import type { LambdaDeps } from './lib/deps';
import { createPublishHandler } from './lib/publish-api';
import { createScheduledPollHandler, type ScheduledPollEvent } from './lib/scheduled-poll';
import { createScheduledRelayHandler, isRelayEvent } from './lib/scheduled-relay';
import { createTrimHandler } from './lib/scheduled-trim';
import { createWakeUpPollHandler } from './lib/wake-up-poll';

export interface LambdaHandlers {
  /**
   * EventBridge schedule → one poll run of the consumer its input names, or the outbox
   * relay when the input is `{"job": "relay"}`.
   */
  readonly poll: (
    event: ScheduledPollEvent,
    context: Parameters<ReturnType<typeof createScheduledPollHandler>>[1],
  ) => Promise<Awaited<ReturnType<ReturnType<typeof createScheduledPollHandler>>> | RelayJobReport>;
  /** SQS wake-up messages → poll the wake-up consumers they name (partial batch response). */
  readonly wakeUp: ReturnType<typeof createWakeUpPollHandler>;
  /** Schedule → safe trim, DLT retention, reaper, backlog metrics. */
  readonly trim: ReturnType<typeof createTrimHandler>;
  /** Function URL / HTTP API → the publish API. */
  readonly publish: ReturnType<typeof createPublishHandler>;
}

/** The shared poll function's handler: scheduled polls, and the outbox relay on `{"job": "relay"}`. */
export function createPollFunctionHandler(config: DeploymentConfig, deps: LambdaDeps = {}): LambdaHandlers['poll'] {
  const poll = createScheduledPollHandler(config, deps);
  const relay = createScheduledRelayHandler(config, deps);
  return (event: ScheduledPollEvent, context) => (isRelayEvent(event) ? relay(event, context) : poll(event, context));
}

/** Each handler connects (and resolves its own secrets) on its first invocation only. */
export function createLambdaHandlers(config: DeploymentConfig, deps: LambdaDeps = {}): LambdaHandlers {
  return {
    poll: createPollFunctionHandler(config, deps),
    wakeUp: createWakeUpPollHandler(config, deps),
    trim: createTrimHandler(config, deps),
    publish: createPublishHandler(config, deps),
  };
}

export { createConsumerHandler } from './lib/consumer-function';
export { createPublishHandler, createScheduledPollHandler, createScheduledRelayHandler, createTrimHandler, createWakeUpPollHandler };
export type { LambdaDeps } from './lib/deps';
export type { SecretFetcher } from './lib/secret-env';
export type { SqsSender } from './lib/sqs-wake-up';
export type { FunctionRole } from './lib/roles';
export type { PublishRequestEvent } from './lib/publish-api';
export type { ScheduledPollEvent, PollDetail } from './lib/scheduled-poll';
