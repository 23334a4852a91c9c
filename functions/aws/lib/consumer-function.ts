/**
 * The function of one consumer (CDK prop `isolateConsumers`): its schedule's EventBridge
 * events and its own wake-up queue's SQS batches, for the consumer CONSUMER_ENV names. It
 * resolves, and is granted, that consumer's secrets only — no other consumer's keys.
 */
import type { Context, SQSEvent } from 'aws-lambda';
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { ConfigError } from '../../../src/ground/errors';
import { lambdaContainer } from './container';
import { withDefaults, type LambdaDeps } from './deps';
import { CONSUMER_ENV } from './roles';
import { createScheduledPollHandler, type ScheduledPollEvent } from './scheduled-poll';
import { createWakeUpPollHandler } from './wake-up-poll';

function consumerOf(config: DeploymentConfig, env: Readonly<Record<string, string | undefined>>): string {
  const name = env[CONSUMER_ENV];
  if (name === undefined || !config.consumers.has(name)) {
    const message = name === undefined ? 'is not set: the function does not know its consumer' : `names no consumer of deployment ${config.name}`;
    throw new ConfigError('consumer function', [{ path: CONSUMER_ENV, message }]);
  }
  return name;
}

const isSqsEvent = (event: unknown): event is SQSEvent => typeof event === 'object' && event !== null && Array.isArray((event as SQSEvent).Records);

export function createConsumerHandler(config: DeploymentConfig, deps: LambdaDeps = {}) {
  const consumer = consumerOf(config, deps.env ?? process.env);
  // One container (runtime, connection) for both kinds of invocation.
  const scope = { consumer, container: lambdaContainer(config, withDefaults(deps), 'consumer', consumer) };
  const scheduled = createScheduledPollHandler(config, deps, scope);
  const woken = createWakeUpPollHandler(config, deps, scope);
  return (event: ScheduledPollEvent | SQSEvent, context: Pick<Context, 'getRemainingTimeInMillis'>) =>
    isSqsEvent(event) ? woken(event, context) : scheduled(event, context);
}
