/**
 * The wake-up queue and its own dead-letter queue. It carries only wake-up messages
 * (`{"streams": [...]}`), never transport entries — those live in Redis — so a message in
 * the DLQ means wake-ups that repeatedly failed to poll, not lost data.
 */
import { Duration } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** Deliveries of one wake-up before SQS moves it to the DLQ. */
export const WAKE_UP_MAX_RECEIVES = 5;
/** AWS's advice: visibility timeout ≥ 6 × the consumer function's timeout. */
const VISIBILITY_FACTOR = 6;
const SQS_MAX_VISIBILITY_S = 43_200;

export interface WakeUpQueues {
  readonly queue: sqs.Queue;
  readonly deadLetters: sqs.Queue;
}

/**
 * `id` tells apart the queues of isolated consumers (one each, e.g. `WakeUpQueue-payment`),
 * which share one DLQ (`deadLetters`).
 */
export function wakeUpQueues(scope: Construct, functionTimeoutMs: number, options: { id?: string; deadLetters?: sqs.Queue } = {}): WakeUpQueues {
  const deadLetters =
    options.deadLetters ??
    new sqs.Queue(scope, 'WakeUpDlq', {
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
  const queue = new sqs.Queue(scope, options.id ?? 'WakeUpQueue', {
    // A wake-up is worthless after the next scheduled poll; a day covers outages.
    retentionPeriod: Duration.days(1),
    visibilityTimeout: Duration.seconds(Math.min(SQS_MAX_VISIBILITY_S, VISIBILITY_FACTOR * Math.ceil(functionTimeoutMs / 1_000))),
    deadLetterQueue: { queue: deadLetters, maxReceiveCount: WAKE_UP_MAX_RECEIVES },
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
  });
  return { queue, deadLetters };
}

/**
 * Polls on wake-ups; a message whose poll failed comes back alone (partial batch response).
 * `maxConcurrency` bounds the pollers the trigger runs at once (each opens a Redis
 * connection): a burst of publishes waits in the queue instead.
 */
export function subscribeWakeUps(fn: lambda.Function, queue: sqs.IQueue, maxConcurrency: number): void {
  fn.addEventSource(new SqsEventSource(queue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency }));
}
