/**
 * The example order saga end to end over a real Redis: orders placed as the shop; polling
 * the five consumers drives one to `completed` and the other — declined at charge — to
 * `compensated`, with its reserved stock given back. Also: the definition digest is what the
 * documented rule computes. Runs on both databases (pg on the service, PGlite); all state
 * lives there, so a fresh connection (a reopened PGlite folder) sees it.
 *
 * The payment timeout (saga timeouts, SPEC §5.6): armed in the very transaction that issues
 * the charge and cancelled in the one that records its answer (same xmin as the step's other
 * writes), so a completed charge leaves nothing scheduled; a charge nobody answers times out,
 * the stock is released and the order ends compensated — and the charge's late success is
 * refunded; a timeout that fires after the answer (its cancel lost the race) is ignored; and
 * the orchestrator's own key, which signs the timeouts, cannot sign anything else there.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import config, { demo, Streams } from '../../saga.config';
import { EventTypes, ORDER_SAGA, ORDER_SAGA_DIGEST, Producers } from 'order-saga-example/definition';
import type { OrderState } from 'order-saga-example';
import { sagaTables } from '../../examples/order-saga/schema';
import { runPollJob, runRelayJob, type RelayJobReport } from '../../src/deployment/jobs';
import { encodeResult } from '../../src/saga/envelopes';
import { listScheduled } from '../../src/schedule/list';
import { moveDueEvents } from '../../src/schedule/move';
import { sleepMs } from '../support/poller';
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
  let admin: ReturnType<typeof adminClient>;
  /** The run of the first test's demo orders, whose state the last test reads anew. */
  let firstRunId: string | undefined;
  beforeAll(async () => {
    admin = adminClient();
    port = connectIoredis(inject('redisUrl'));
    database = await exampleDatabase(kind);
    runtime = createRuntime(config, { port, env: secretEnv(), database: async () => database.db });
  }, 120_000);
  afterAll(async () => {
    admin?.disconnect();
    await port?.close();
    await database?.dispose();
  });

  const deadline = () => Date.now() + 5_000;
  const poll = (name: string) => runPollJob(runtime, name, { deadline: deadline() });
  const relay = async (): Promise<RelayJobReport['relay']> => (await runRelayJob(runtime)).relay;
  /** Polls every consumer but `skip`, then relays; `passes` times. */
  async function drive(passes: number, skip: readonly string[] = []) {
    const total = { published: 0, scheduledPublished: 0, cancelsApplied: 0, cancelsMissed: 0 };
    for (let pass = 0; pass < passes; pass += 1) {
      for (const name of config.consumers.keys()) if (!skip.includes(name)) await poll(name);
      const report = await relay();
      for (const field of Object.keys(total) as Array<keyof typeof total>) total[field] += report[field];
    }
    return total;
  }
  const tables = sagaTables('order_saga');
  const stateOf = async (orderId: string) =>
    (await database.db.query<{ state: OrderState }>(`SELECT state FROM ${tables.instances} WHERE instance_id = $1`, [orderId]))[0]?.state;
  const stock = async () => ((await demo.snapshot(runtime.postgres)) as { stock: Record<string, number> }).stock['sku-espresso']!;
  const place = (orderId: string, fields: { amount_cents: number; pay_within_s?: number }) =>
    runtime.publisherFor(demo.producer).publish({
      eventType: EventTypes.orderPlaced,
      eventId: `placed-${orderId}`,
      payload: JSON.stringify({ order_id: orderId, sku: 'sku-espresso', qty: 1, ...fields }),
    });
  const scheduledTimeouts = async (orderId: string) =>
    (await listScheduled(port, Streams.results, { limit: 10_000 })).events.map((e) => e.eventId).filter((id) => id.startsWith(`${orderId}:`));
  /** Moves due scheduled results until `eventId` has been moved (it is due within seconds). */
  async function fire(eventId: string) {
    for (let i = 0; i < 100; i += 1) {
      await moveDueEvents(port, Streams.results);
      if (!(await listScheduled(port, Streams.results, { limit: 10_000 })).events.some((e) => e.eventId === eventId)) return;
      await sleepMs(100);
    }
    throw new Error(`${eventId} never became due`);
  }
  /** Outbox rows of an order's instance: event id → the transaction that wrote it. */
  const outboxXmins = async (orderId: string) =>
    Object.fromEntries(
      (await database.db.query<{ event_id: string; tx: string }>(`SELECT event_id, xmin::text AS tx FROM public.saga_outbox WHERE ordering_key = $1`, [orderId])).map((r) => [r.event_id, r.tx]),
    );

  it('completes one order and compensates the declined one, every command, result and timeout through the outbox', async () => {
    const finished: Array<Record<string, unknown>> = [];
    const stop = demo.onFinished((fields) => finished.push(fields));
    const runId = randomBytes(4).toString('hex');
    const events = demo.events(runId).filter((e) => !e.eventId.endsWith('-late'));
    for (const name of config.consumers.keys()) await poll(name);
    const stockBefore = await stock();
    await runtime.publisherFor(demo.producer).publishBatch(events.map((e) => ({ ...e, payload: JSON.stringify(e.payload) })));
    // Each pass moves every instance at least one step (the relay publishes what it decided); the longest path has 6 hops.
    const total = { published: 0, scheduledPublished: 0, cancelsApplied: 0, cancelsMissed: 0 };
    for (let pass = 0; pass < 8 && finished.length < 2; pass += 1) {
      const report = await drive(1);
      for (const field of Object.keys(total) as Array<keyof typeof total>) total[field] += report[field];
    }
    stop();
    finished.sort((a, b) => String(a.instance).localeCompare(String(b.instance)));
    expect(finished).toEqual([
      { workflow: 'order', instance: `order-${runId}-declined`, status: 'compensated', steps: [], failure: 'charge_declined', late: undefined },
      { workflow: 'order', instance: `order-${runId}-ok`, status: 'completed', steps: ['reserve', 'charge', 'ship'], failure: undefined, late: undefined },
    ]);
    // 2 reserves, 1 release, 2 charges, 1 ship, a result for each, and a timeout for each
    // charge: 14 events through the outbox; both timeouts cancelled by their charge's answer.
    expect(total).toEqual({ published: 14, scheduledPublished: 2, cancelsApplied: 2, cancelsMissed: 0 });
    expect(await stock()).toBe(stockBefore - 1); // one shipped, the declined one's unit released
    for (const orderId of [`order-${runId}-ok`, `order-${runId}-declined`]) {
      // Cancelled, not fired: nothing of the order is left in the schedule, and the results
      // stream never saw its timeout.
      expect(await scheduledTimeouts(orderId)).toEqual([]);
      expect(await admin.get(`${Streams.results}:pub:${orderId}:charge:execute:timeout`)).toMatch(/^cancelled@/);
      // Armed in the charge's transaction, cancelled in the answer's: each with the step's other writes.
      const tx = await outboxXmins(orderId);
      expect(tx[`${orderId}:charge:execute:timeout`]).toBe(tx[`${orderId}:charge:execute`]);
      expect(tx[`cancel ${orderId}:charge:execute:timeout`]).toBe(orderId.endsWith('-ok') ? tx[`${orderId}:ship:execute`] : tx[`${orderId}:reserve:compensate`]);
    }
    const results = (await admin.xrange(Streams.results, '-', '+')).map(([, fields]) => fields[fields.indexOf('event_id') + 1]!);
    expect(results.filter((id) => id.includes(runId) && id.endsWith(':timeout'))).toEqual([]);
    for (const [stream, group] of [[Streams.results, 'orchestrator'], [Streams.inventory, 'inventory'], [Streams.payment, 'payment']] as const) {
      expect(await pendingIds(admin, stream, group)).toEqual([]);
    }
    firstRunId = runId;
  });

  it('a charge nobody answers times out: the stock is released, the order compensated, and the late charge refunded', async () => {
    const orderId = `order-${randomBytes(4).toString('hex')}-silent`;
    const finished: Array<Record<string, unknown>> = [];
    const stop = demo.onFinished((fields) => fields.instance === orderId && finished.push(fields));
    const stockBefore = await stock();
    await place(orderId, { amount_cents: 1_200, pay_within_s: 1 });
    // Everyone but the payment participant: the charge command waits on its stream.
    await drive(3, ['payment']);
    expect(await stateOf(orderId)).toMatchObject({ status: 'running', step: 'charge', timeout: `${orderId}:charge:execute:timeout` });
    expect(await stock()).toBe(stockBefore - 1);
    expect(await scheduledTimeouts(orderId)).toEqual([`${orderId}:charge:execute:timeout`]);

    await fire(`${orderId}:charge:execute:timeout`);
    await drive(3, ['payment']);
    expect(finished).toEqual([{ workflow: 'order', instance: orderId, status: 'compensated', steps: [], failure: 'step_timed_out', late: undefined }]);
    expect(await stateOf(orderId)).toMatchObject({ status: 'compensated', timed_out: 'charge' });
    expect(await stock()).toBe(stockBefore);

    // The payment participant wakes up at last and takes the money: the orchestrator refunds it.
    await drive(4);
    expect(finished.at(-1)).toEqual({ workflow: 'order', instance: orderId, status: 'compensated', steps: [], failure: 'step_timed_out', late: 'refunded' });
    stop();
    const [charge] = await database.db.query<{ amount_cents: number; refunded_cents: number }>(`SELECT amount_cents, refunded_cents FROM ${tables.charges} WHERE order_id = $1`, [orderId]);
    expect(charge).toEqual({ amount_cents: 0, refunded_cents: 1_200 });
    expect(await stock()).toBe(stockBefore);
    for (const [stream, group] of [[Streams.results, 'orchestrator'], [Streams.inventory, 'inventory'], [Streams.payment, 'payment']] as const) {
      expect(await pendingIds(admin, stream, group)).toEqual([]);
    }
  });

  it('a timeout that fires after the charge was answered (its cancel lost the race) is ignored', async () => {
    const orderId = `order-${randomBytes(4).toString('hex')}-race`;
    const finished: Array<Record<string, unknown>> = [];
    const stop = demo.onFinished((fields) => fields.instance === orderId && finished.push(fields));
    const stockBefore = await stock();
    await place(orderId, { amount_cents: 1_200, pay_within_s: 1 });
    for (const step of ['order-intake', 'inventory', 'orchestrator', 'payment']) {
      await poll(step);
      await relay();
    }
    // The orchestrator records the charge's answer: its transaction enqueues the cancel and
    // the ship command — which the relay has not published when the timeout comes due.
    expect((await poll('orchestrator')).report.acked).toBe(1);
    expect(await stateOf(orderId)).toMatchObject({ status: 'running', step: 'ship' });
    await fire(`${orderId}:charge:execute:timeout`);
    expect(await relay()).toMatchObject({ cancelsApplied: 0, cancelsMissed: 1 });
    const handled = await poll('orchestrator');
    expect(handled.report).toMatchObject({ acked: 1, deadLettered: 0, retained: 0 });
    expect(await stateOf(orderId)).toMatchObject({ status: 'running', step: 'ship', completed: ['reserve', 'charge'] });
    await drive(3);
    stop();
    expect(finished).toEqual([{ workflow: 'order', instance: orderId, status: 'completed', steps: ['reserve', 'charge', 'ship'], failure: undefined, late: undefined }]);
    expect(await stock()).toBe(stockBefore - 1);
    const [charge] = await database.db.query<{ refunded_cents: number }>(`SELECT refunded_cents FROM ${tables.charges} WHERE order_id = $1`, [orderId]);
    expect(charge).toEqual({ refunded_cents: 0 });
    // The timeout went through the orchestrator's inbox like any result (a repeat would be a duplicate).
    const inbox = await database.db.query(`SELECT 1 FROM public.saga_inbox WHERE consumer = 'orchestrator' AND event_id = $1`, [`${orderId}:charge:execute:timeout`]);
    expect(inbox).toHaveLength(1);
  });

  it('the orchestrator\'s key signs timeouts on the results stream, and nothing else there', async () => {
    const orderId = `order-${randomBytes(4).toString('hex')}-forged`;
    await place(orderId, { amount_cents: 1_200 });
    await drive(3, ['payment']);
    const forged = encodeResult({
      result_id: `${orderId}:charge:execute:result`,
      instance_id: orderId,
      workflow: ORDER_SAGA.workflow,
      definition_version: ORDER_SAGA.version,
      definition_digest: ORDER_SAGA_DIGEST,
      step: 'charge',
      action: 'execute',
      outcome: 'succeeded',
      output: {},
      completed_at: new Date().toISOString(),
    });
    await runtime.publisherFor(Producers.orchestrator).publish({ eventType: EventTypes.paymentResult, eventId: `${orderId}:charge:execute:result`, payload: forged });
    const run = await poll('orchestrator');
    expect(run.report).toMatchObject({ deadLettered: 1, authRejected: 1, acked: 0 });
    const [record] = (await admin.xrange(`${Streams.results}:dlt`, '-', '+')).slice(-1);
    expect(record![1]).toEqual(expect.arrayContaining(['reason', 'producer_not_allowed']));
    expect(await stateOf(orderId)).toMatchObject({ status: 'running', step: 'charge' });
  });

  // Last: on PGlite, reopening closes the database the runtime holds.
  it('keeps the state in the database, not the process: a new connection sees it', async () => {
    expect(firstRunId).toBeDefined();
    const reopened = await database.reopen();
    const seen = (await demo.snapshot(async () => ({ ...(await runtime.postgres()), db: reopened }))) as { orders: Array<{ order_id: string; status: string }> };
    expect(seen.orders.filter((o) => o.order_id.includes(firstRunId!)).map((o) => o.status).sort()).toEqual(['compensated', 'completed']);
  });
});
