/**
 * Wake-ups after a publish, as SQS messages to the queue `wakeUp.queueUrlEnv` names (the
 * stack sets it to the wake-up queue's URL). Only streams that some wake-up consumer reads
 * are named; when none is, nothing is sent.
 *
 * The AWS SDK is imported on the first send, not at start-up: most invocations (trim, polls
 * whose handlers publish nothing) never send, and loading the SQS client costs 30-40 ms of
 * cold start. The Lambda runtime provides the SDK, so bundles keep it external, and the
 * package names it as an optional peer: a Cloudflare or local user never installs it.
 */
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { readSecrets, type SecretEnv } from '../../../src/deployment/secrets';
import { wakeUpMessageFor } from '../../../src/deployment/wake-up';

/** The one SQS call this needs, typed structurally; an SQSClient is one. */
export interface SqsSender {
  send(command: { readonly input: { QueueUrl?: string; MessageBody?: string } }): Promise<unknown>;
}

export type WakeUp = (streams: readonly string[]) => Promise<void>;

type SqsModule = typeof import('@aws-sdk/client-sqs');
let sqsModule: Promise<SqsModule> | undefined;
const loadSqs = (): Promise<SqsModule> =>
  (sqsModule ??= import('@aws-sdk/client-sqs').catch((error: unknown) => {
    sqsModule = undefined;
    // Reported by the publisher as "wake-up not sent" (it never fails the publish).
    throw new Error('@aws-sdk/client-sqs is not installed: the Lambda runtime provides it; elsewhere install it to send SQS wake-ups', { cause: error });
  }));

/** undefined when the deployment sends no SQS wake-ups; fails naming a missing queue URL variable. */
export function sqsWakeUp(config: DeploymentConfig, env: SecretEnv, sqs?: SqsSender): WakeUp | undefined {
  const target = config.wakeUpTarget('sqs');
  if (!target) return undefined;
  const queueUrl = readSecrets(env, [target.queueUrlEnv], 'wake-up queue').get(target.queueUrlEnv)!;
  let client: SqsSender | undefined = sqs;
  return async (streams) => {
    const message = wakeUpMessageFor(config, streams);
    if (!message) return;
    const { SQSClient, SendMessageCommand } = await loadSqs();
    client ??= new SQSClient({});
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(message) }));
  };
}
