/**
 * The example order saga end to end over a real Redis: two orders placed as the shop;
 * polling the five consumers drives one to `completed` and the other — declined at
 * charge — to `compensated`, with its reserved stock given back. Also: the definition
 * digest is what the documented rule computes. Runs on both databases (pg on the service,
 * PGlite); all state lives there, so a fresh connection (a reopened PGlite folder) sees it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import config, { demo, Streams } from '../../saga.config';
import { ORDER_SAGA, ORDER_SAGA_DIGEST } from 'order-saga-example/definition';
import { runPollJob, runRelayJob } from '../../src/deployment/jobs';
import { createRuntime, type DeploymentRuntime } from '../../src/deployment/runtime';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { adminClient, pendingIds } from '../support/redis';
import { databaseKinds } from '../postgres/support/databases';
import { exampleDatabase, type ExampleDatabase } from './example-database';

function secretEnv(): Record<string, string> {
  const names = new Set([...config.secrets.publishApi, ...[...config.consumers.keys()].flatMap((name) => config.secrets.consumer(name))]);
  return Object.fromEntries([...names].map((name) => [name, `hex:${randomBytes(32).toString('hex')}`]));
}

describe('example order saga', () => {
  it('has the digest the documented rule computes', () => {
    expect(createHash('sha256').update(JSON.stringify(ORDER_SAGA)).digest('hex')).toBe(ORDER_SAGA_DIGEST);
  });
});

describe.each(databaseKinds)('example order saga on $name', (kind) => {
  let port: RedisPort;
  let database: ExampleDatabase;
  let runtime: DeploymentRuntime;
  beforeAll(async () => {
    port = connectIoredis(inject('redisUrl'));
    database = await exampleDatabase(kind);
    runtime = createRuntime(config, { port, env: secretEnv(), database: async () => database.db });
  }, 120_000);
  afterAll(async () => {
    await port?.close();
    await database?.dispose();
  });

  it('completes one order and compensates the declined one, every command and result through the outbox', async () => {
    const finished: Array<Record<string, unknown>> = [];
    const stop = demo.onFinished((fields) => finished.push(fields));
    const runId = randomBytes(4).toString('hex');
    const events = demo.events(runId);
    const deadline = () => Date.now() + 5_000;
    for (const name of config.consumers.keys()) await runPollJob(runtime, name, { deadline: deadline() });
    await runtime.publisherFor(demo.producer).publishBatch(events.map((e) => ({ ...e, payload: JSON.stringify(e.payload) })));
    // Each pass moves every instance at least one step (the relay publishes what it decided); the longest path has 6 hops.
    let published = 0;
    for (let pass = 0; pass < 8 && finished.length < 2; pass += 1) {
      for (const name of config.consumers.keys()) await runPollJob(runtime, name, { deadline: deadline() });
      published += (await runRelayJob(runtime)).relay.published;
    }
    stop();
    finished.sort((a, b) => String(a.instance).localeCompare(String(b.instance)));
    expect(finished).toEqual([
      { workflow: 'order', instance: `order-${runId}-declined`, status: 'compensated', steps: [], failure: 'charge_declined' },
      { workflow: 'order', instance: `order-${runId}-ok`, status: 'completed', steps: ['reserve', 'charge', 'ship'], failure: undefined },
    ]);
    // 2 reserves, 1 release, 2 charges, 1 ship, and a result for each: 12 events through the outbox.
    expect(published).toBe(12);
    const snapshot = (await demo.snapshot(runtime.postgres)) as { stock: Record<string, number>; orders: Array<{ order_id: string }> };
    expect(snapshot.stock['sku-espresso']).toBe(99); // one shipped, the declined one's unit released
    const admin = adminClient();
    try {
      for (const [stream, group] of [[Streams.results, 'orchestrator'], [Streams.inventory, 'inventory'], [Streams.payment, 'payment']] as const) {
        expect(await pendingIds(admin, stream, group)).toEqual([]);
      }
    } finally {
      admin.disconnect();
    }
    // The state is in the database, not the process: a new connection sees it.
    const reopened = await database.reopen();
    const seen = (await demo.snapshot(async () => ({ ...(await runtime.postgres()), db: reopened }))) as { orders: Array<{ order_id: string; status: string }> };
    expect(seen.orders.filter((o) => o.order_id.includes(runId)).map((o) => o.status).sort()).toEqual(['compensated', 'completed']);
  });
});
