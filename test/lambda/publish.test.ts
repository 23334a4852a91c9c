/**
 * The publish function with Function URL events as Lambda delivers them: the Hono app
 * answers through the Lambda adapter, the entry lands in Redis, and the SQS wake-up it
 * sends is a message the wake-up function polls on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import type { SqsSender } from '../../functions/aws/lib/sqs-wake-up';
import { createPublishHandler } from '../../functions/aws/lib/publish-api';
import { createWakeUpPollHandler } from '../../functions/aws/lib/wake-up-poll';
import { adminClient, pendingIds, uniquePrefix } from '../support/redis';
import { baseEnv, deployment, functionUrlEvent, harness, lambdaContext, SHOP_TOKEN, sqsEvent, sqsRecord, streamsFor, type Harness } from './fixtures';

describe('publish function', () => {
  let admin: Redis;
  let runs: Harness[];
  beforeEach(() => {
    admin = adminClient();
    runs = [];
  });
  afterEach(async () => {
    await Promise.all(runs.map((run) => run.close()));
    admin.disconnect();
  });

  function setUp(prefix: string) {
    const sent: Array<Parameters<SqsSender['send']>[0]['input']> = [];
    const run = harness();
    runs.push(run);
    const handler = createPublishHandler(deployment(prefix), { ...run.deps, sqs: { send: async (command) => void sent.push(command.input) } });
    return { handler, sent, run };
  }

  const placeOrder = (eventId: string, token = SHOP_TOKEN) =>
    functionUrlEvent({
      method: 'POST',
      path: '/v1/events/order.placed',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': eventId, 'content-type': 'application/json' },
      body: '{"sku":"A","qty":1}',
    });

  it('answers 202 for a Function URL publish, appends the entry and sends a wake-up the wake-up function polls on', async () => {
    const prefix = uniquePrefix();
    const { orders } = streamsFor(prefix);
    const { handler, sent } = setUp(prefix);

    const response = await handler(placeOrder('order-1'), lambdaContext(10_000));

    expect(response.statusCode).toBe(202);
    const body = JSON.parse(response.body) as { event_id: string; stream: string; entry_id: string };
    expect(body).toMatchObject({ event_id: 'order-1', stream: orders });
    const entries = await admin.xrange(orders, '-', '+');
    expect(entries.map(([id]) => id)).toEqual([body.entry_id]);
    expect(entries[0]![1]).toEqual(expect.arrayContaining(['event_id', 'order-1', 'payload', '{"sku":"A","qty":1}']));
    expect(sent).toEqual([{ QueueUrl: baseEnv().WAKEUP_QUEUE_URL, MessageBody: JSON.stringify({ streams: [orders] }) }]);

    const wakeRun = harness();
    runs.push(wakeRun);
    const wake = createWakeUpPollHandler(deployment(prefix), wakeRun.deps);
    expect(await wake(sqsEvent(sqsRecord('wake-1', sent[0]!.MessageBody!)), lambdaContext(10_000))).toEqual({ batchItemFailures: [] });
    expect(wakeRun.logged()).toEqual([expect.objectContaining({ msg: 'poll run', consumer: 'fulfil', acked: 1 })]);
    expect(await pendingIds(admin, orders, 'fulfil')).toEqual([]);
  });

  it('answers 200 duplicate for a repeated Idempotency-Key and 401 for a wrong token, in one warm container', async () => {
    const prefix = uniquePrefix();
    const { handler, sent, run } = setUp(prefix);
    await handler(placeOrder('order-1'), lambdaContext(10_000));
    const again = await handler(placeOrder('order-1'), lambdaContext(10_000));
    expect(again.statusCode).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ event_id: 'order-1', duplicate: true });

    const refused = await handler(placeOrder('order-2', 'not-the-token'), lambdaContext(10_000));
    expect(refused.statusCode).toBe(401);
    expect(refused.headers?.['content-type']).toBe('application/problem+json');
    expect(await admin.xlen(streamsFor(prefix).orders)).toBe(1);
    expect(sent).toHaveLength(2);
    expect(run.ports).toHaveLength(1);
  });

  it('serves /healthz through the adapter', async () => {
    const { handler } = setUp(uniquePrefix());
    const response = await handler(functionUrlEvent({ method: 'GET', path: '/healthz', headers: {} }), lambdaContext(10_000));
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'ok' });
  });

  it('fails start-up naming a missing queue URL variable', async () => {
    const run = harness({ env: { ...baseEnv(), WAKEUP_QUEUE_URL: undefined } });
    runs.push(run);
    const handler = createPublishHandler(deployment(uniquePrefix()), { ...run.deps, sqs: { send: async () => undefined } });
    await expect(handler(placeOrder('order-1'), lambdaContext(10_000))).rejects.toThrow(/WAKEUP_QUEUE_URL: environment variable is not set/);
    expect(run.logged()).toEqual([expect.objectContaining({ level: 'error', job: 'publish', error: expect.objectContaining({ code: 'CONFIG_INVALID' }) })]);
  });

  it('does not cache a failed start: the next request reads the secrets again', async () => {
    let calls = 0;
    const fetchSecret = async () => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('extension not ready'), { code: 'SECRET_UNAVAILABLE' });
      return SHOP_TOKEN;
    };
    const run = harness({ env: { ...baseEnv(), SHOP_TOKEN: undefined, SHOP_TOKEN_SECRET_ID: 'shop/token' }, fetchSecret });
    runs.push(run);
    const handler = createPublishHandler(deployment(uniquePrefix()), { ...run.deps, sqs: { send: async () => undefined } });
    await expect(handler(placeOrder('order-1'), lambdaContext(10_000))).rejects.toThrow(/extension not ready/);
    expect((await handler(placeOrder('order-1'), lambdaContext(10_000))).statusCode).toBe(202);
    expect((await handler(placeOrder('order-2'), lambdaContext(10_000))).statusCode).toBe(202);
    expect(calls).toBe(2);
  });
});
