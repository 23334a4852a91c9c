/**
 * The scheduled poll handler with the event the stack's rule sends and a context whose
 * remaining time drives the deadline; too little time refuses the run before any Redis
 * command.
 */
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createRuntime } from '../../src/deployment/runtime';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { POLL_RESERVE_MS, requiredRemainingMs } from '../../functions/aws/lib/budget';
import { Metrics } from '../../functions/aws/lib/metrics';
import { createScheduledPollHandler } from '../../functions/aws/lib/scheduled-poll';
import { adminClient, pendingIds, uniquePrefix } from '../support/redis';
import { baseEnv, deployment, harness, lambdaContext, scheduledEvent, SETTLE_RESERVE_MS, streamsFor, type Harness, type Seen } from './fixtures';

const NOW = 1_777_204_800_000;

describe('scheduled poll handler', () => {
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

  it('polls the consumer the Scheduled Event names, with deadline = now + remaining time − reserve', async () => {
    const prefix = uniquePrefix();
    const seen: Seen = { deadlines: [] };
    const config = deployment(prefix, seen);
    const publisher = createRuntime(config, { port: publisherPort, env: baseEnv() }).publisherFor('shop');
    run = harness({ now: () => NOW });
    const handler = createScheduledPollHandler(config, run.deps);

    // The first run creates the group (from 0-0), so entries published before it count.
    await publisher.publish({ eventType: 'order.placed', eventId: 'order-1', payload: new TextEncoder().encode('{"sku":"A"}') });
    await publisher.publish({ eventType: 'order.placed', eventId: 'order-2', payload: new TextEncoder().encode('{"sku":"B"}') });
    const result = await handler(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(7_000));

    expect(result.report.acked).toBe(2);
    expect(seen.deadlines).toEqual([
      { consumer: 'fulfil', eventId: 'order-1', deadline: NOW + 7_000 - POLL_RESERVE_MS - SETTLE_RESERVE_MS },
      { consumer: 'fulfil', eventId: 'order-2', deadline: NOW + 7_000 - POLL_RESERVE_MS - SETTLE_RESERVE_MS },
    ]);
    expect(await pendingIds(admin, streamsFor(prefix).orders, 'fulfil')).toEqual([]);
    const groups = (await admin.xinfo('GROUPS', streamsFor(prefix).orders)) as unknown[][];
    expect(groups[0]).toEqual(expect.arrayContaining(['entries-read', 2]));

    const [line, ...rest] = run.logged();
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ msg: 'poll run', deployment: 'shop', consumer: 'fulfil', acked: 2, Deployment: 'shop', Consumer: 'fulfil' });
    const emf = (line!._aws as { CloudWatchMetrics: Array<{ Namespace: string; Metrics: Array<{ Name: string }> }> }).CloudWatchMetrics[0]!;
    expect(emf.Namespace).toBe('SagaStreams');
    expect(emf.Metrics.map((m) => m.Name)).toEqual(expect.arrayContaining([Metrics.deletedPending, Metrics.authRejected]));
  });

  it('runs no longer than the consumer budget when Lambda has more time left', async () => {
    const seen: Seen = { deadlines: [] };
    const config = deployment(uniquePrefix(), seen);
    await createRuntime(config, { port: publisherPort, env: baseEnv() })
      .publisherFor('shop')
      .publish({ eventType: 'order.placed', eventId: 'order-1', payload: new Uint8Array([1]) });
    run = harness({ now: () => NOW });
    await createScheduledPollHandler(config, run.deps)(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(600_000));
    expect(seen.deadlines.map((d) => d.deadline)).toEqual([NOW + 20_000 - SETTLE_RESERVE_MS]);
  });

  it('refuses to start with too little time left: typed error, a warning line, no Redis command', async () => {
    const prefix = uniquePrefix();
    const config = deployment(prefix);
    run = harness({ now: () => NOW });
    const handler = createScheduledPollHandler(config, run.deps);
    const required = requiredRemainingMs([config.consumers.get('fulfil')!.config]);

    await expect(handler(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(required - 1))).rejects.toMatchObject({
      code: 'RUN_DEADLINE_TOO_CLOSE',
    });
    expect(run.ports).toEqual([]);
    expect(await admin.exists(streamsFor(prefix).orders)).toBe(0);
    expect(run.logged()).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'poll run refused to start', consumer: 'fulfil', error: expect.objectContaining({ code: 'RUN_DEADLINE_TOO_CLOSE' }) }),
    ]);

    // Exactly the required time is enough (on a clock that stands still): the run starts and creates the group.
    await handler(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(required));
    expect(run.roundTrips()).toBeGreaterThan(0);
    expect(await admin.exists(streamsFor(prefix).orders)).toBe(1);
  });

  it('reuses one runtime (and connection) per container across invocations', async () => {
    const config = deployment(uniquePrefix());
    run = harness();
    const handler = createScheduledPollHandler(config, run.deps);
    await handler(scheduledEvent({ consumer: 'fulfil' }), lambdaContext(10_000));
    await handler({ consumer: 'fulfil' }, lambdaContext(10_000));
    expect(run.ports).toHaveLength(1);
  });

  it('refuses an event naming no scheduled consumer, before connecting', async () => {
    run = harness();
    const handler = createScheduledPollHandler(deployment(uniquePrefix()), run.deps);
    await expect(handler(scheduledEvent({ consumer: 'audit' }), lambdaContext(10_000))).rejects.toThrow(/"audit" is not a scheduled consumer/);
    await expect(handler(scheduledEvent({} as { consumer: string }), lambdaContext(10_000))).rejects.toThrow(/names no consumer/);
    expect(run.ports).toEqual([]);
  });
});
