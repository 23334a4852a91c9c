/**
 * SPEC §6.2 503 with Redis stopped, on every client: the connection to Redis goes through
 * a proxy the test cuts (for REST, the REST endpoint itself goes away), so Redis keeps its
 * state for inspection. Publishes answer 503 with Retry-After and nothing is written;
 * /readyz reports the failed ping; /healthz stays 200 (the process is alive).
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { createRuntime } from '../../src/deployment/runtime';
import { createPublishApp } from '../../src/http/app';
import { RETRY_AFTER_SECONDS } from '../../src/web/problems';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { connectUpstash } from '../../src/redis/upstash-port';
import { adminClient, uniquePrefix } from '../support/redis';
import { startRestServer } from '../../local/rest-emulator';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { bearer, env, publishDeployment, secretsIn, SHOP_TOKEN, streamsOf } from './fixture';

interface Cuttable {
  readonly port: RedisPort;
  cut(): void;
  close(): Promise<void>;
}

async function behindProxy(): Promise<TcpProxy> {
  const target = new URL(inject('redisUrl'));
  return startTcpProxy(target.hostname, Number(target.port));
}

const kinds = [
  {
    name: 'ioredis',
    async connect(): Promise<Cuttable> {
      const proxy = await behindProxy();
      const port = connectIoredis(proxy.url);
      return { port, cut: () => proxy.cut(), close: async () => (await port.close(), await proxy.close()) };
    },
  },
  {
    name: 'upstash',
    // What a Worker sees when Upstash is down: its REST endpoint refuses connections.
    async connect(): Promise<Cuttable> {
      const token = randomBytes(16).toString('hex');
      const rest = await startRestServer({ redisUrl: inject('redisUrl'), token });
      const port = connectUpstash({ url: rest.url, token });
      let closed: Promise<void> | undefined;
      const stop = () => (closed ??= rest.close());
      return { port, cut: () => void stop(), close: stop };
    },
  },
];

describe.each(kinds)('publish API with Redis stopped ($name)', (kind) => {
  let redis: Cuttable;
  let admin: Redis;
  beforeEach(async () => {
    redis = await kind.connect();
    admin = adminClient();
  });
  afterEach(async () => {
    await redis.close();
    admin.disconnect();
  });

  it('503 with Retry-After for single and batch publishes; /readyz 503, /healthz 200', { timeout: 20_000 }, async () => {
    const prefix = uniquePrefix();
    const { orders } = streamsOf(prefix);
    const logs: string[] = [];
    const wakeUps: unknown[] = [];
    const app = createPublishApp({
      runtime: createRuntime(publishDeployment(prefix), { port: redis.port, env }),
      env,
      log: (line) => logs.push(line),
      wakeUp: async (streams) => void wakeUps.push(streams),
    });
    const publish = (id: string) =>
      app.request('/v1/events/order.placed', { method: 'POST', headers: { ...bearer(SHOP_TOKEN), 'idempotency-key': id }, body: 'x' });
    expect((await publish('before')).status).toBe(202);

    redis.cut();
    const single = await publish('during');
    const batch = await app.request('/v1/events', {
      method: 'POST',
      headers: { ...bearer(SHOP_TOKEN), 'content-type': 'application/json' },
      body: JSON.stringify({ events: [{ event_type: 'order.paid', event_id: 'during-2', payload: {} }] }),
    });
    for (const res of [single, batch]) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
      const body = await res.text();
      expect(JSON.parse(body)).toMatchObject({ code: 'redis_unavailable', status: 503 });
      expect(body).not.toMatch(/\bat .+:\d+:\d+/);
      expect(secretsIn(body)).toEqual([]);
    }
    const ready = await app.request('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
    const readiness = (await ready.json()) as { code: string; checks: Array<{ check: string; ok: boolean }> };
    expect(readiness.code).toBe('not_ready');
    expect(readiness.checks.find((c) => c.check === 'ping')?.ok).toBe(false);
    expect((await app.request('/healthz')).status).toBe(200);

    expect(await admin.xlen(orders)).toBe(1);
    expect(await admin.exists(`${orders}:pub:during`)).toBe(0);
    expect(wakeUps).toHaveLength(1);
    expect(logs.map((l) => JSON.parse(l).msg)).toContain('redis unavailable');
    expect(secretsIn(logs.join('\n'))).toEqual([]);
  });
});
