/**
 * The SQS wake-up handler with SQS events as Lambda receives them: each named consumer is
 * polled, and exactly the messages whose poll failed come back in `batchItemFailures`.
 */
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createRuntime } from '../../src/deployment/runtime';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { requiredRemainingMs } from '../../functions/aws/lib/budget';
import { createWakeUpPollHandler } from '../../functions/aws/lib/wake-up-poll';
import { adminClient, pendingIds, uniquePrefix } from '../support/redis';
import { baseEnv, deployment, harness, lambdaContext, sqsEvent, sqsRecord, streamsFor, type Harness } from './fixtures';

describe('wake-up poll handler', () => {
  let admin: Redis;
  let publisherPort: RedisPort;
  let run: Harness;
  beforeEach(() => {
    admin = adminClient();
    publisherPort = connectIoredis(inject('redisUrl'));
  });
  afterEach(async () => {
    await run?.close();
    await publisherPort.close();
    admin.disconnect();
  });

  async function publishBoth(prefix: string) {
    const publisher = createRuntime(deployment(prefix), { port: publisherPort, env: baseEnv() }).publisherFor('shop');
    await publisher.publish({ eventType: 'order.placed', eventId: 'order-1', payload: new Uint8Array([1]) });
    await publisher.publish({ eventType: 'audit.logged', eventId: 'audit-1', payload: new TextEncoder().encode('ok') });
  }

  it('reports exactly the message whose poll failed in batchItemFailures', async () => {
    const prefix = uniquePrefix();
    const { orders, audit } = streamsFor(prefix);
    await publishBoth(prefix);
    // The audit stream's key is overwritten by a plain string: its poll fails (WRONGTYPE).
    await admin.del(audit);
    await admin.set(audit, 'not a stream');
    run = harness();
    const handler = createWakeUpPollHandler(deployment(prefix), run.deps);

    const response = await handler(
      sqsEvent(sqsRecord('msg-orders', JSON.stringify({ streams: [orders] })), sqsRecord('msg-audit', JSON.stringify({ streams: [audit] }))),
      lambdaContext(30_000),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'msg-audit' }] });
    expect(await pendingIds(admin, orders, 'fulfil')).toEqual([]);
    expect(await admin.xlen(orders)).toBe(1);
    const groups = (await admin.xinfo('GROUPS', orders)) as unknown[][];
    expect(groups[0]).toEqual(expect.arrayContaining(['entries-read', 1]));
    const lines = run.logged();
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'poll run', consumer: 'fulfil', acked: 1 }));
    expect(lines).toContainEqual(expect.objectContaining({ level: 'error', msg: 'poll run failed', consumer: 'audit', error: expect.objectContaining({ code: 'REDIS_COMMAND_FAILED' }) }));
  });

  it('wakes every wake-up consumer for an empty or absent stream list, each polled once', async () => {
    const prefix = uniquePrefix();
    const { orders, audit } = streamsFor(prefix);
    await publishBoth(prefix);
    run = harness();
    const handler = createWakeUpPollHandler(deployment(prefix), run.deps);

    const response = await handler(sqsEvent(sqsRecord('m1', '{}'), sqsRecord('m2', '{"streams":[]}')), lambdaContext(30_000));

    expect(response).toEqual({ batchItemFailures: [] });
    expect(await pendingIds(admin, orders, 'fulfil')).toEqual([]);
    expect(await pendingIds(admin, audit, 'audit')).toEqual([]);
    const runs = run.logged().filter((line) => line.msg === 'poll run');
    expect(runs.map((line) => [line.consumer, line.acked]).sort()).toEqual([
      ['audit', 1],
      ['fulfil', 1],
    ]);
  });

  it('reports a body that is not a wake-up message, and polls nothing for a stream without wake-up consumers', async () => {
    run = harness();
    const handler = createWakeUpPollHandler(deployment(uniquePrefix()), run.deps);
    const response = await handler(
      sqsEvent(sqsRecord('poison', 'not json'), sqsRecord('typo', '{"streams":"orders"}'), sqsRecord('other', '{"streams":["elsewhere"]}')),
      lambdaContext(30_000),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'poison' }, { itemIdentifier: 'typo' }] });
    expect(run.ports).toEqual([]);
    expect(run.logged()).toEqual([expect.objectContaining({ level: 'warn', msg: 'malformed wake-up messages', count: 2 })]);
  });

  it('with too little time left reports every message and sends no Redis command', async () => {
    const prefix = uniquePrefix();
    const config = deployment(prefix);
    run = harness();
    const handler = createWakeUpPollHandler(config, run.deps);
    const required = requiredRemainingMs([config.consumers.get('fulfil')!.config]);
    const response = await handler(
      sqsEvent(sqsRecord('a', JSON.stringify({ streams: [streamsFor(prefix).orders] })), sqsRecord('b', '{}')),
      lambdaContext(required - 1),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'b' }] });
    expect(run.ports).toEqual([]);
    expect(await admin.exists(streamsFor(prefix).orders)).toBe(0);
    expect(run.logged()).toEqual([expect.objectContaining({ level: 'warn', msg: 'poll run refused to start', error: expect.objectContaining({ code: 'RUN_DEADLINE_TOO_CLOSE' }) })]);
  });
});
