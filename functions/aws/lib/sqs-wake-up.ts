/**
 * Wake-ups after a publish, as SQS messages to the queue `wakeUp.queueUrlEnv` names (the
 * stack sets it to the wake-up queue's URL). Only streams that some wake-up consumer reads
 * are named; when none is, nothing is sent.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { readSecrets, type SecretEnv } from '../../../src/deployment/secrets';
import { wakeUpMessageFor } from '../../../src/deployment/wake-up';

/** The one SQS call this needs; an SQSClient is one. */
export interface SqsSender {
  send(command: SendMessageCommand): Promise<unknown>;
}

export type WakeUp = (streams: readonly string[]) => Promise<void>;

/** undefined when the deployment sends no SQS wake-ups; fails naming a missing queue URL variable. */
export function sqsWakeUp(config: DeploymentConfig, env: SecretEnv, sqs?: SqsSender): WakeUp | undefined {
  const target = config.wakeUpTarget('sqs');
  if (!target) return undefined;
  const queueUrl = readSecrets(env, [target.queueUrlEnv], 'wake-up queue').get(target.queueUrlEnv)!;
  const client = sqs ?? new SQSClient({});
  return async (streams) => {
    const message = wakeUpMessageFor(config, streams);
    if (message) await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message) }));
  };
}
