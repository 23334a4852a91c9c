/**
 * Isolated consumers (CDK prop `isolateConsumers`): a consumer's own function runs its
 * scheduled polls and its wake-ups with that consumer's secrets only — another consumer's
 * key is neither needed nor read — and publishers send each wake-up to the queue of each
 * consumer it wakes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createConsumerHandler } from '../../functions/aws/lib/consumer-function';
import { CONSUMER_ENV } from '../../functions/aws/lib/roles';
import { sqsWakeUp, WAKE_UP_QUEUES_ENV } from '../../functions/aws/lib/sqs-wake-up';
import { uniquePrefix } from '../support/redis';
import { baseEnv, deployment, harness, lambdaContext, scheduledEvent, sqsEvent, sqsRecord, streamsFor, type Harness } from './fixtures';

describe('a consumer’s own function', () => {
  let run: Harness | undefined;
  afterEach(async () => {
    await run?.close();
  });

  it('polls on its schedule and on its wake-ups holding only its own secrets (no ORDERS_KEY for the audit consumer)', async () => {
    const { ORDERS_KEY: _, ...withoutOrdersKey } = baseEnv();
    // The shared wake-up function would fail here: it resolves every wake-up consumer's keys.
    run = harness({ env: { ...withoutOrdersKey, [CONSUMER_ENV]: 'audit' } });
    const handler = createConsumerHandler(deployment(uniquePrefix()), run.deps);
    const woken = await handler(sqsEvent(sqsRecord('m-1', '{"streams":[]}')), lambdaContext(60_000));
    expect(woken).toEqual({ batchItemFailures: [] });
    expect(run.logged().map((l) => [l.msg, l.consumer])).toEqual([['poll run', 'audit']]);
  });

  it('shares one container (one connection) between its scheduled and wake-up invocations', async () => {
    run = harness({ env: { ...baseEnv(), [CONSUMER_ENV]: 'fulfil' } });
    const handler = createConsumerHandler(deployment(uniquePrefix()), run.deps);
    await handler(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(60_000));
    expect(await handler(sqsEvent(sqsRecord('m-1', '{"streams":[]}')), lambdaContext(60_000))).toEqual({ batchItemFailures: [] });
    expect(run.logged().map((l) => [l.msg, l.consumer])).toEqual([
      ['poll run', 'fulfil'],
      ['poll run', 'fulfil'],
    ]);
    expect(run.ports).toHaveLength(1);
  });

  it('refuses another consumer’s schedule, and a missing or unknown consumer name at start', async () => {
    run = harness({ env: { ...baseEnv(), [CONSUMER_ENV]: 'audit' } });
    const handler = createConsumerHandler(deployment(uniquePrefix()), run.deps);
    await expect(handler(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(60_000))).rejects.toThrow('"fulfil" is not a scheduled consumer');
    expect(() => createConsumerHandler(deployment(uniquePrefix()), { env: baseEnv() })).toThrow(`${CONSUMER_ENV}: is not set`);
    expect(() => createConsumerHandler(deployment(uniquePrefix()), { env: { ...baseEnv(), [CONSUMER_ENV]: 'nobody' } })).toThrow('names no consumer');
  });

  it('fails naming the variable when its own key is missing (the fulfil consumer without ORDERS_KEY)', async () => {
    const { ORDERS_KEY: _, ...withoutOrdersKey } = baseEnv();
    run = harness({ env: { ...withoutOrdersKey, [CONSUMER_ENV]: 'fulfil' } });
    const handler = createConsumerHandler(deployment(uniquePrefix()), run.deps);
    await expect(handler(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(60_000))).rejects.toThrow('ORDERS_KEY');
  });
});

describe('wake-ups to per-consumer queues', () => {
  it('sends a publish’s wake-up to the queue of each consumer it wakes, and only those', async () => {
    const prefix = uniquePrefix();
    const config = deployment(prefix);
    const sent: Array<{ QueueUrl?: string; MessageBody?: string }> = [];
    const queues = { fulfil: 'https://sqs/fulfil', audit: 'https://sqs/audit' };
    const { WAKEUP_QUEUE_URL: _, ...env } = baseEnv();
    const wake = sqsWakeUp(config, { ...env, [WAKE_UP_QUEUES_ENV]: JSON.stringify(queues) }, { send: async (command) => void sent.push(command.input) })!;
    await wake([streamsFor(prefix).audit]);
    expect(sent).toEqual([{ QueueUrl: queues.audit, MessageBody: JSON.stringify({ streams: [streamsFor(prefix).audit] }) }]);
    expect(() => sqsWakeUp(config, { ...env, [WAKE_UP_QUEUES_ENV]: '["not an object"]' })).toThrow(WAKE_UP_QUEUES_ENV);
  });
});
