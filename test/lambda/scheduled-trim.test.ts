/**
 * The scheduled trim handler: retention over every stream, then one backlog metric line
 * per consumer (oldest-pending age measured from the entry id), read back from Redis.
 */
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import type { Redis } from 'ioredis';
import { runPollJob } from '../../src/deployment/jobs';
import { createRuntime } from '../../src/deployment/runtime';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { Metrics } from '../../functions/aws/lib/metrics';
import { createTrimHandler } from '../../functions/aws/lib/scheduled-trim';
import { adminClient, append, pendingIds, uniquePrefix } from '../support/redis';
import { baseEnv, deployment, harness, scheduledEvent, streamsFor, type Harness } from './fixtures';

const AGE_MS = 120_000;

describe('scheduled trim handler', () => {
  let admin: Redis;
  let setupPort: RedisPort;
  let run: Harness;
  beforeEach(() => {
    admin = adminClient();
    setupPort = connectIoredis(inject('redisUrl'));
  });
  afterEach(async () => {
    await run?.close();
    await setupPort.close();
    admin.disconnect();
  });

  it('trims what every group acknowledged and emits oldest-pending age per consumer', async () => {
    const prefix = uniquePrefix();
    const { orders, audit } = streamsFor(prefix);
    const config = deployment(prefix);
    const setup = createRuntime(config, { port: setupPort, env: baseEnv() });
    // An audit entry appended two minutes ago whose handler keeps failing: it stays pending.
    const oldId = `${Date.now() - AGE_MS}-0`;
    await admin.xadd(audit, oldId, 'event', 'audit.logged', 'event_id', 'audit-old', 'payload', 'retain');
    const shop = setup.publisherFor('shop');
    await shop.publish({ eventType: 'order.placed', eventId: 'order-1', payload: new Uint8Array([1]) });
    const last = await shop.publish({ eventType: 'order.placed', eventId: 'order-2', payload: new Uint8Array([2]) });
    const deadline = () => Date.now() + 5_000;
    expect((await runPollJob(setup, 'fulfil', { deadline: deadline() })).report.acked).toBe(2);
    expect((await runPollJob(setup, 'audit', { deadline: deadline() })).report.retained).toBe(1);

    run = harness();
    const result = await createTrimHandler(config, run.deps)(scheduledEvent({}));

    // Trim keeps entries from the group's last-delivered id on: only order-1 goes.
    expect((await admin.xrange(orders, '-', '+')).map(([id]) => id)).toEqual([last.entryId]);
    expect(await pendingIds(admin, audit, 'audit')).toEqual([oldId]);
    expect(await admin.xlen(audit)).toBe(1);
    expect(result.backlog.audit).toMatchObject({ pending: 1, oldestPendingId: oldId });
    expect(result.backlog.audit!.oldestPendingAgeMs).toBeGreaterThanOrEqual(AGE_MS);

    const lines = run.logged();
    expect(lines[0]).toMatchObject({ msg: 'trim run', deployment: 'shop', removed: 1 });
    const backlog = lines.filter((line) => line.msg === 'backlog');
    const audited = backlog.find((line) => line.consumer === 'audit')!;
    expect(audited[Metrics.pending]).toBe(1);
    expect(audited[Metrics.oldestPendingAgeMs]).toBeGreaterThanOrEqual(AGE_MS);
    expect(backlog.find((line) => line.consumer === 'fulfil')).toMatchObject({ [Metrics.pending]: 0, [Metrics.oldestPendingAgeMs]: 0 });
    const emf = (audited._aws as { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string }> }> })
      .CloudWatchMetrics[0]!;
    expect(emf).toMatchObject({ Namespace: 'SagaStreams', Dimensions: [['Deployment', 'Consumer']] });
    expect(emf.Metrics.map((m) => m.Name)).toContain(Metrics.oldestPendingAgeMs);
    expect(audited).toMatchObject({ Deployment: 'shop', Consumer: 'audit' });
  });

  it('reports a group no run has created as an empty backlog, and logs a probe that fails while still probing the others', async () => {
    const prefix = uniquePrefix();
    const config = deployment(prefix);
    await runPollJob(createRuntime(config, { port: setupPort, env: baseEnv() }), 'fulfil', { deadline: Date.now() + 5_000 });
    await append(admin, streamsFor(prefix).audit, { event: 'audit.logged', event_id: 'a1', payload: 'ok' });

    run = harness();
    const result = await createTrimHandler(config, run.deps)(scheduledEvent({}));

    expect(result.backlog.audit).toBeUndefined();
    expect(result.backlog.fulfil).toMatchObject({ pending: 0 });
    // No group yet: an empty backlog with its metrics (age 0), not a missing datapoint the
    // oldest-pending alarm (missing data breaching) would fire on.
    const audit = run.logged().find((line) => line.consumer === 'audit');
    expect(audit).toMatchObject({ level: 'info', msg: 'backlog', pending: 0, oldestPendingAgeMs: 0, detail: { group: 'not created yet' } });
    expect((audit!._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> }).CloudWatchMetrics[0]!.Metrics.map((m) => m.Name)).toContain('oldestPendingAgeMs');

    // A probe that fails (here: the stream key holds a string) is logged, and the others still run.
    await admin.del(streamsFor(prefix).audit);
    await admin.set(streamsFor(prefix).audit, 'not a stream');
    const again = harness();
    const second = await createTrimHandler(config, again.deps)({ job: 'backlog' });
    expect(second.backlog.fulfil).toMatchObject({ pending: 0 });
    expect(again.logged()).toContainEqual(expect.objectContaining({ level: 'error', msg: 'backlog probe failed', consumer: 'audit', error: expect.objectContaining({ code: 'REDIS_COMMAND_FAILED' }) }));
    await again.close();
  });

  it('runs the backlog probe alone on {"job": "backlog"} (the every-minute rule): no trim', async () => {
    const prefix = uniquePrefix();
    const config = deployment(prefix);
    const setup = createRuntime(config, { port: setupPort, env: baseEnv() });
    await runPollJob(setup, 'fulfil', { deadline: Date.now() + 5_000 });

    run = harness();
    const result = await createTrimHandler(config, run.deps)({ job: 'backlog' });

    expect(result.trim).toBeUndefined();
    // One line per consumer (audit's group does not exist yet), and no trim run.
    expect(run.logged().map((line) => [line.msg, line.consumer]).sort()).toEqual([
      ['backlog', 'audit'],
      ['backlog', 'fulfil'],
    ]);
    expect(result.backlog.fulfil).toMatchObject({ pending: 0 });
  });
});
