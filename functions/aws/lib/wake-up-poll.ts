/**
 * Poll on SQS wake-up messages, with a partial batch response: each consumer a batch names
 * is polled once (concurrently, under one deadline), and a message is reported in
 * `batchItemFailures` exactly when one of its polls failed or its body is not a wake-up —
 * so SQS redelivers only those, and its DLQ ends up holding only those.
 */
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { DeploymentConfig } from '../../../src/deployment/define-config';
import { runPollJob } from '../../../src/deployment/jobs';
import { runLogLine } from '../../../src/deployment/log';
import { formatLogLine } from '../../../src/deployment/log-line';
import { assertCanStart, pollDeadline } from './budget';
import { lambdaContainer, type ConsumerScope } from './container';
import { withDefaults, type LambdaDeps, type ResolvedDeps } from './deps';
import { problemLine } from './log-lines';
import { consumersToWake, parseWakeUpMessage } from '../../../src/deployment/wake-up';

interface Wanted {
  readonly messageId: string;
  /** undefined: the body is not a wake-up message. */
  readonly consumers: readonly string[] | undefined;
}

function failuresOf(wanted: readonly Wanted[], failed: ReadonlySet<string> | 'all'): SQSBatchResponse {
  const fails = (w: Wanted) => w.consumers === undefined || failed === 'all' || w.consumers.some((c) => failed.has(c));
  return { batchItemFailures: wanted.filter(fails).map((w) => ({ itemIdentifier: w.messageId })) };
}

function malformedLine(deployment: string, count: number, timestamp: number): string {
  // The messages are reported as failures: SQS moves them to the DLQ.
  return formatLogLine({ level: 'warn', msg: 'malformed wake-up messages', deployment, job: 'poll', timestamp, counters: { count } });
}

/** `scope`: the one consumer an isolated function polls (its own queue's messages wake only it). */
export function createWakeUpPollHandler(config: DeploymentConfig, deps: LambdaDeps = {}, scope?: ConsumerScope) {
  const resolved: ResolvedDeps = withDefaults(deps);
  const only = scope?.consumer;
  const start = scope?.container ?? lambdaContainer(config, resolved, 'wake-up');
  const line = (consumer?: string) => ({ deployment: config.name, job: 'poll' as const, consumer, now: resolved.now });

  return async (event: SQSEvent, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<SQSBatchResponse> => {
    const wanted: Wanted[] = event.Records.map((record) => {
      const message = parseWakeUpMessage(record.body);
      const woken = message && consumersToWake(config, [message]);
      return { messageId: record.messageId, consumers: only === undefined ? woken : woken?.filter((name) => name === only) };
    });
    const malformed = wanted.filter((w) => w.consumers === undefined).length;
    if (malformed > 0) resolved.log(malformedLine(config.name, malformed, resolved.now()));
    const consumers = [...new Set(wanted.flatMap((w) => w.consumers ?? []))];
    if (consumers.length === 0) return failuresOf(wanted, new Set());
    try {
      assertCanStart(context.getRemainingTimeInMillis(), consumers.map((name) => config.consumers.get(name)!.config));
    } catch (error) {
      resolved.log(problemLine(line(), error));
      return failuresOf(wanted, 'all');
    }
    const { runtime } = await start().catch((error: unknown) => {
      resolved.log(problemLine(line(), error));
      throw error;
    });
    const deadline = pollDeadline(resolved.now(), context.getRemainingTimeInMillis());
    const failed = new Set<string>();
    await Promise.all(
      consumers.map(async (consumer) => {
        try {
          const result = await runPollJob(runtime, consumer, { deadline });
          resolved.log(runLogLine(result, { deployment: config.name, emf: true, now: resolved.now }));
        } catch (error) {
          failed.add(consumer);
          resolved.log(problemLine(line(consumer), error));
        }
      }),
    );
    return failuresOf(wanted, failed);
  };
}
