/**
 * Wake-ups after a publish, as SQS messages to the queue `wakeUp.queueUrlEnv` names (the
 * stack sets it to the wake-up queue's URL). Only streams that some wake-up consumer reads
 * are named; when none is, nothing is sent. A scheduled event's wake-up is sent with
 * `DelaySeconds` (SPEC §5.6), so a poller runs at its due time rather than at the next tick.
 *
 * With isolated consumers (CDK prop `isolateConsumers`) each consumer has its own queue: the
 * stack sets WAKE_UP_QUEUES_ENV to `{"<consumer>": "<queue URL>"}`, and a publish sends the
 * message to the queue of each consumer it wakes.
 *
 * The AWS SDK is imported on the first send, not at start-up: most invocations (trim, polls
 * whose handlers publish nothing) never send, and loading the SQS client costs 30-40 ms of
 * cold start. The Lambda runtime provides the SDK, so bundles keep it external, and the
 * package names it as an optional peer: a Cloudflare or local user never installs it.
 */
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { readSecrets, type SecretEnv } from '../../../src/deployment/secrets';
import { wakeUpConsumers } from '../../../src/deployment/jobs';
import { wakeUpMessageFor } from '../../../src/deployment/wake-up';
import { SQS_MAX_DELAY_SECONDS, wakeUpDelaySeconds, type WakeUpSender } from '../../../src/deployment/wake-up-plan';
import { ConfigError } from '../../../src/ground/errors';

/** JSON object consumer → queue URL, set by the CDK construct for isolated consumers. */
export const WAKE_UP_QUEUES_ENV = 'SAGA_STREAMS_WAKE_UP_QUEUES';

/** The one SQS call this needs, typed structurally; an SQSClient is one. */
export interface SqsSender {
  send(command: { readonly input: { QueueUrl?: string; MessageBody?: string; DelaySeconds?: number } }): Promise<unknown>;
}

export type WakeUp = WakeUpSender;

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
  const perConsumer = consumerQueues(env);
  const shared = perConsumer ? undefined : readSecrets(env, [target.queueUrlEnv], 'wake-up queue').get(target.queueUrlEnv)!;
  let client: SqsSender | undefined = sqs;
  return async (streams, delayMs) => {
    const message = wakeUpMessageFor(config, streams);
    if (!message) return;
    // A scheduled event's wake-up arrives at its due time (rounded up to whole seconds), or —
    // past SQS's 15-minute bound — is not sent: the scheduled poll moves the event then.
    const delaySeconds = delayMs === undefined ? 0 : wakeUpDelaySeconds(delayMs, SQS_MAX_DELAY_SECONDS);
    if (delaySeconds === undefined) return;
    // Each consumer reads one stream: the woken consumers of distinct streams are distinct.
    const queues = perConsumer ? message.streams.flatMap((stream) => wakeUpConsumers(config, stream).flatMap((name) => perConsumer[name] ?? [])) : [shared!];
    const { SQSClient, SendMessageCommand } = await loadSqs();
    client ??= new SQSClient({});
    const body = JSON.stringify(message);
    const delay = delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {};
    await Promise.all(queues.map((url) => client!.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, ...delay }))));
  };
}

/** The per-consumer queue URLs, when the stack isolates consumers; a malformed value fails start-up. */
export function consumerQueues(env: SecretEnv): Readonly<Record<string, string>> | undefined {
  const text = env[WAKE_UP_QUEUES_ENV];
  if (!text) return undefined;
  // Written by the construct, not by hand: a shape check is enough (kept small, the poll bundle has a budget).
  const value: unknown = text.startsWith('{') ? JSON.parse(text) : undefined;
  if (typeof value !== 'object') throw new ConfigError('wake-up queues', [{ path: WAKE_UP_QUEUES_ENV, message: 'must be a JSON object of consumer name → queue URL' }]);
  return value as Record<string, string>;
}
