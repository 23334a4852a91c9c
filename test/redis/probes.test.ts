/**
 * SPEC §8 probes. Backlog numbers are compared with what XPENDING / XINFO / XLEN say about
 * known content, and the oldest-pending age must count a poison pill (an entry redelivered
 * many times, whose PEL idle time keeps resetting). Readiness reports every problem as a
 * value: Redis unreachable, invalid configs, groups that cannot be ensured.
 */
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseConsumerConfig } from '../../src/consume/config';
import { retryAfterMs } from '../../src/consume/retry';
import { probeBacklog } from '../../src/probes/backlog';
import { checkReadiness } from '../../src/probes/readiness';
import { connectIoredis, IOREDIS_DEFAULTS, ioredisPort } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { fastConfig } from '../support/poller';
import { adminClient, uniquePrefix } from '../support/redis';

const HOUR_MS = 3_600_000;

describe.each(clientKinds)('probes over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h));

  const groupInfo = async (group: string) => {
    const groups = (await admin.xinfo('GROUPS', stream)) as Array<Array<string | number | null>>;
    const row = groups.map((flat) => new Map(flat.flatMap((v, i) => (i % 2 === 0 ? [[String(v), flat[i + 1]] as const] : [])))).find((m) => m.get('name') === group);
    return row!;
  };

  it('reports pending, oldest age by entry id (poison pills included), consumers, lag and DLT length', async () => {
    const [seconds] = await admin.time();
    const oldMs = Number(seconds) * 1000 - HOUR_MS;
    const old = [`${oldMs}-0`, `${oldMs}-1`, `${oldMs + 1}-0`];
    for (const id of old) await admin.xadd(stream, id, 'n', id);
    await admin.xadd(stream, '*', 'n', 'new1');
    await admin.xadd(stream, '*', 'n', 'new2');
    await admin.xgroup('CREATE', stream, 'g', '0-0');
    await admin.xreadgroup('GROUP', 'g', 'c1', 'COUNT', 2, 'STREAMS', stream, '>');
    await admin.xreadgroup('GROUP', 'g', 'c2', 'COUNT', 1, 'STREAMS', stream, '>');
    await admin.xack(stream, 'g', old[1]!);
    // The oldest entry is a poison pill: reclaimed over and over, so its PEL idle stays ~0.
    for (let i = 0; i < 9; i += 1) await admin.xclaim(stream, 'g', i % 2 ? 'c1' : 'c2', 0, old[0]!);
    await admin.xadd(`${stream}:dlt`, '*', 'reason', 'a');
    await admin.xadd(`${stream}:dlt`, '*', 'reason', 'b');

    const backlog = await probeBacklog(port, { stream, group: 'g' });

    const [count, smallest] = (await admin.xpending(stream, 'g')) as [number, string];
    const [oldestRow] = (await admin.xpending(stream, 'g', '-', '+', 1)) as Array<[string, string, number, number]>;
    const [, , idle, deliveries] = oldestRow!;
    const info = await groupInfo('g');
    expect(backlog).toMatchObject({
      pending: count,
      oldestPendingId: smallest,
      oldestPendingDeliveries: deliveries,
      consumers: info.get('consumers'),
      lag: info.get('lag'),
      lastDeliveredId: info.get('last-delivered-id'),
      streamLength: await admin.xlen(stream),
      deadLetters: await admin.xlen(`${stream}:dlt`),
    });
    expect(backlog).toMatchObject({ pending: 2, oldestPendingId: old[0], oldestPendingDeliveries: 10, consumers: 2, lag: 2, deadLetters: 2 });
    expect(backlog.oldestPendingAgeMs).toBe(backlog.observedAtMs - oldMs);
    expect(backlog.oldestPendingAgeMs).toBeGreaterThanOrEqual(HOUR_MS);
    expect(idle).toBeLessThan(HOUR_MS);
  });

  it('reports an empty backlog without an oldest entry', async () => {
    await admin.xgroup('CREATE', stream, 'g', '$', 'MKSTREAM');
    expect(await probeBacklog(port, { stream, group: 'g', dlt: `${stream}:other-dlt` })).toMatchObject({
      pending: 0,
      oldestPendingId: undefined,
      oldestPendingAgeMs: undefined,
      oldestPendingDeliveries: undefined,
      consumers: 0,
      lag: 0,
      streamLength: 0,
      deadLetters: 0,
    });
  });

  it('reports the next due time of a sample of the PEL: backoff, deferral, and what is due already', async () => {
    const config = parseConsumerConfig(fastConfig(stream, { minIdleMs: 10_000 }));
    const due = { minIdleMs: config.minIdleMs, retry: config.retry, deferKey: config.keys.defer };
    await admin.xgroup('CREATE', stream, 'g', '0-0', 'MKSTREAM');
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await admin.xadd(stream, '*', 'n', String(i)))!);
    await admin.xreadgroup('GROUP', 'g', 'c1', 'STREAMS', stream, '>');
    const [seconds, micros] = await admin.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    // ids[0]: 3rd delivery a minute ago, waits 40 s × (0.8..1) → due already; ids[1]: 4th delivery
    // a minute ago, waits 80 s × (0.8..1) → due in 4..20 s; ids[2]: in a handler's hands for 1 s.
    await admin.xclaim(stream, 'g', 'c1', 0, ids[0]!, 'TIME', now - 60_000, 'RETRYCOUNT', 3, 'JUSTID');
    await admin.xclaim(stream, 'g', 'c1', 0, ids[1]!, 'TIME', now - 60_000, 'RETRYCOUNT', 4, 'JUSTID');
    await admin.xclaim(stream, 'g', 'c1', 0, ids[2]!, 'TIME', now - 1_000, 'RETRYCOUNT', 1, 'JUSTID');
    const backoffDue = now - 60_000 + retryAfterMs(config.retry, 10_000, ids[1]!, 4);
    // Delivery times are TIME − idle, read in one round trip: at most the ms between the two readings late.
    const expectDueAt = (probed: { nextDueAt?: number; observedAtMs: number }, expected: number) => {
      expect(probed.nextDueAt).toBeGreaterThanOrEqual(expected);
      expect(probed.nextDueAt! - expected).toBeLessThanOrEqual(probed.observedAtMs - now);
    };
    const first = await probeBacklog(port, { stream, group: 'g', due });
    expect(first.dueNow).toBe(1);
    expectDueAt(first, Math.min(backoffDue, now + 9_000));
    expect(first.nextDueInMs).toBe(first.nextDueAt! - first.observedAtMs);
    // A deferral pushes ids[2] out, and another one makes ids[0] wait again.
    await admin.hset(config.keys.defer, ids[2]!, String(now + 3_600_000), ids[0]!, String(now + 120_000));
    const deferred = await probeBacklog(port, { stream, group: 'g', due });
    expect(deferred.dueNow).toBe(0);
    expectDueAt(deferred, Math.min(backoffDue, now + 120_000));
    // Without the consumer's policy the probe does not guess.
    expect(await probeBacklog(port, { stream, group: 'g' })).not.toHaveProperty('nextDueAt');
  });

  it('fails with the Redis error when the group does not exist', async () => {
    await admin.xadd(stream, '*', 'n', '1');
    await expect(probeBacklog(port, { stream, group: 'nope' })).rejects.toMatchObject({ code: 'REDIS_COMMAND_FAILED' });
  });

  it('is ready when Redis answers and every config is valid, ensuring every group', async () => {
    const other = `${stream}:2`;
    const readiness = await checkReadiness({
      port,
      consumers: [fastConfig(stream), fastConfig(other, { group: 'h', startFrom: '$' })],
    });
    expect(readiness.ready).toBe(true);
    expect(readiness.checks.map((c) => [c.check, c.ok])).toEqual([
      ['ping', true],
      ['config', true],
      ['config', true],
      ['group', true],
      ['group', true],
    ]);
    expect((await groupInfo('g')).get('last-delivered-id')).toBe('0-0');
    expect(await admin.exists(other)).toBe(1);
  });

  it('lists every invalid config and failing extra check, without echoing values', async () => {
    const readiness = await checkReadiness({
      port,
      consumers: [fastConfig(stream), { ...fastConfig('has spaces-hunter2'), batch: 0 }],
      extra: [{ name: 'publisher', subject: 'routes', run: () => { throw Object.assign(new Error('no routes'), { code: 'CONFIG_INVALID' }); } }],
    });
    expect(readiness.ready).toBe(false);
    const failed = readiness.checks.filter((c) => !c.ok);
    expect(failed.map((c) => [c.check, c.subject, c.code])).toEqual([
      ['config', 'consumers[1]', 'CONFIG_INVALID'],
      ['publisher', 'routes', 'CONFIG_INVALID'],
    ]);
    expect(failed[0]!.message).toMatch(/batch/);
    expect(JSON.stringify(readiness)).not.toMatch(/hunter2/);
    // The valid config's group was still ensured; the invalid one was never attempted.
    expect(readiness.checks.filter((c) => c.check === 'group')).toEqual([{ check: 'group', subject: `${stream}/g`, ok: true }]);
  });
});

describe('readiness failures a client cannot fake (ioredis)', () => {
  let admin: Redis;
  beforeAll(() => {
    admin = adminClient();
  });
  afterAll(() => {
    admin.disconnect();
  });

  it('is not ready when Redis is unreachable', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const client = new Redis(`redis://127.0.0.1:${closedPort}`, { ...IOREDIS_DEFAULTS, retryStrategy: () => null });
    client.on('error', () => {}); // the refusal is what this test expects; keep the log clean
    const port = ioredisPort(client);
    try {
      const readiness = await checkReadiness({ port, consumers: [fastConfig(`${uniquePrefix()}:s`)] });
      expect(readiness.ready).toBe(false);
      expect(readiness.checks.map((c) => [c.check, c.ok, c.code])).toEqual([
        ['ping', false, 'REDIS_UNAVAILABLE'],
        ['config', true, undefined],
        ['group', false, 'REDIS_UNAVAILABLE'],
      ]);
    } finally {
      client.disconnect();
    }
  });

  it('surfaces missing ACL rights on group creation before any traffic', async () => {
    const user = `u${uniquePrefix()}`;
    const stream = `${uniquePrefix()}:s`;
    await admin.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '+@all', '-xgroup');
    const url = new URL(inject('redisUrl'));
    url.username = user;
    url.password = 'pw';
    const port = connectIoredis(url.toString());
    try {
      const readiness = await checkReadiness({ port, consumers: [fastConfig(stream)] });
      expect(readiness.ready).toBe(false);
      const group = readiness.checks.find((c) => c.check === 'group')!;
      expect(group).toMatchObject({ ok: false, code: 'REDIS_COMMAND_FAILED' });
      expect(group.message).toMatch(/NOPERM/);
      expect(await admin.exists(stream)).toBe(0);
    } finally {
      await port.close();
      await admin.call('ACL', 'DELUSER', user);
    }
  });
});
