/**
 * `publishApi.durability` (SPEC §6.1, §6.2) on the server binary of this run, with a replica
 * started here: 202 once the replica has the entry, 503 (retry) when the wait falls short; on
 * a server without WAITAOF a WAITAOF-based option makes /readyz not ready and a publish 500,
 * naming the option in the log — and over REST the deployment's runtime is refused at start-up.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/deployment/runtime';
import { defineConfig } from '../../src/deployment/define-config';
import { entryConsumer } from '../../src/deployment/consumers';
import { createPublishApp } from '../../src/http/app';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import type { DurabilityInput } from '../../src/redis/durability';
import { upstashKind } from '../support/clients';
import { uniquePrefix } from '../support/redis';
import { expectsWaitAof, labelOf, serverBinaries, startReplicated, type Replicated } from '../support/servers';
import { BILLING_TOKEN, bearer, env, publishDeployment, streamsOf } from '../http/fixture';

const binary = serverBinaries()[0]!;

describe(`publish API with durability on ${labelOf(binary)}`, () => {
  let set: Replicated;
  let port: RedisPort;
  let replica: Redis;
  let logs: string[];

  beforeAll(async () => {
    set = await startReplicated(binary, { appendonly: true });
    port = connectIoredis(set.primary.url);
    replica = new Redis(set.replicas[0]!.url);
  }, 30_000);
  afterEach(() => set.thaw(set.replicas[0]!));
  afterAll(async () => {
    replica?.disconnect();
    await port?.close();
    await set?.stop();
  });

  function app(durability: DurabilityInput) {
    const prefix = uniquePrefix();
    logs = [];
    const runtime = createRuntime(publishDeployment(prefix, { durability }), { port, env });
    return { app: createPublishApp({ runtime, env, log: (line) => logs.push(line) }), streams: streamsOf(prefix) };
  }

  const publish = (target: ReturnType<typeof app>, eventId: string) =>
    target.app.request('/v1/events/payment.charged', { method: 'POST', headers: { ...bearer(BILLING_TOKEN), 'idempotency-key': eventId }, body: '{"amount":1}' });

  it('answers 202 once the replica has the entry, and 503 (retry) when it does not answer in time', async () => {
    const target = app({ replicas: 1, timeoutMs: 300 });
    const accepted = await publish(target, 'e1');
    expect(accepted.status).toBe(202);
    const { entry_id } = (await accepted.json()) as { entry_id: string };
    expect((await replica.xrange(target.streams.payments, '-', '+')).map(([id]) => id)).toEqual([entry_id]);

    set.freeze(set.replicas[0]!);
    const refused = await publish(target, 'e2');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expect(await refused.json()).toMatchObject({ code: 'redis_unavailable' });
    expect(logs.join('\n')).toContain('durability not confirmed: WAIT: replicas 0/1 within 300 ms');
    set.thaw(set.replicas[0]!);
    // The client's retry with the same Idempotency-Key: the append is not repeated.
    const retried = await publish(target, 'e2');
    expect(retried.status).toBe(200);
    expect(await retried.json()).toMatchObject({ duplicate: true });
  });

  if (expectsWaitAof(binary)) {
    it('gives WAITAOF durability: ready, and 202 once the replica fsynced it', async () => {
      const target = app({ primaryAof: true, replicaAof: 1 });
      expect((await target.app.request('/readyz')).status).toBe(200);
      expect((await publish(target, 'e1')).status).toBe(202);
      expect(await replica.xlen(target.streams.payments)).toBe(1);
    });
  } else {
    it(`refuses WAITAOF durability on ${labelOf(binary)}: not ready, 500 naming the option in the log, nothing written`, async () => {
      const target = app({ replicaAof: 1 });
      const ready = await target.app.request('/readyz');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ checks: expect.arrayContaining([{ check: 'publisher', subject: 'billing', ok: false, code: 'CONFIG_INVALID' }]) });
      const refused = await publish(target, 'e1');
      expect(refused.status).toBe(500);
      expect(await refused.json()).toMatchObject({ code: 'server_misconfigured' });
      expect(logs.join('\n')).toContain('durability.replicaAof: needs WAITAOF');
      expect(await replica.exists(target.streams.payments)).toBe(0);
    });
  }
});

describe('durability over REST', () => {
  it('refuses the runtime at start-up, naming every option that asks for it', async () => {
    const port = upstashKind.connect();
    try {
      const prefix = uniquePrefix();
      const deployment = defineConfig({
        name: 'shop',
        redis: { rest: {} },
        streams: { [`${prefix}:orders`]: { auth: { mode: 'exclusive-stream', producer: 'shop' } } },
        routes: { 'order.placed': `${prefix}:orders` },
        consumers: {
          fulfilment: {
            stream: `${prefix}:orders`,
            group: 'g',
            schedule: '* * * * *',
            settings: { runBudgetMs: 5_000, minIdleMs: 10_000, settleReserveMs: 2_000, durability: { replicas: 1 } },
            handler: entryConsumer(() => {}),
          },
        },
        publishApi: { producers: { shop: { tokenEnv: 'SHOP_TOKEN', eventTypes: ['order.placed'] } }, durability: { replicas: 1 } },
      });
      let error: unknown;
      try {
        createRuntime(deployment, { port, env });
      } catch (caught) {
        error = caught;
      }
      expect(error).toMatchObject({
        code: 'CONFIG_INVALID',
        problems: [
          { path: 'publishApi.durability', message: expect.stringContaining('no WAIT or WAITAOF') },
          { path: 'consumers.fulfilment.settings.durability', message: expect.stringContaining('no WAIT or WAITAOF') },
        ],
      });
    } finally {
      await port.close();
    }
  });
});
