/**
 * The saga timeout API over real Postgres (both databases) and Redis, without the example:
 * a step's transaction enqueues its command and its stepTimeout — rolled back, neither
 * exists; committed, the relay schedules the timeout, which reaches the orchestrator's
 * result consumer (keyring, `timeoutProducer`) once due, signed by the orchestrator and
 * recognised by isStepTimeout; cancelled by the completing transaction's enqueueCancel, it
 * never arrives. Without a database, the same event goes straight through the publisher and
 * `cancelScheduled`, and a retried publish of a cancelled timeout does not schedule it again.
 */
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { createPublisher } from '../../src/publish/publisher';
import { connectIoredis } from '../../src/redis/ioredis-port';
import type { RedisPort } from '../../src/redis/port';
import { createOutbox } from '../../src/postgres/outbox';
import { relayOutbox } from '../../src/postgres/relay';
import type { SqlDatabase } from '../../src/postgres/sql';
import type { Tables } from '../../src/postgres/tables';
import { createResultConsumer } from '../../src/saga/result-consumer';
import type { ResultEnvelope } from '../../src/saga/envelopes';
import { isStepTimeout, stepTimeout, stepTimeoutRef, type TimedCommand } from '../../src/saga/timeouts';
import { cancelScheduled } from '../../src/schedule/cancel';
import { listScheduled } from '../../src/schedule/list';
import { moveDueEvents } from '../../src/schedule/move';
import { fastConfig, sleepMs } from '../support/poller';
import { adminClient, uniquePrefix } from '../support/redis';
import { databaseKinds, freshTables } from './support/databases';

const ORCHESTRATOR_KEY = 'orchestrator-key-0123456789abcdef';
const PAYMENT_KEY = 'payment-key-0123456789abcdef0123';

const commandOf = (instance: string): TimedCommand => ({
  command_id: `${instance}:charge:execute`,
  instance_id: instance,
  workflow: 'order',
  definition_version: 1,
  definition_digest: 'b'.repeat(64),
  step: 'charge',
  action: 'execute',
});

describe.each(databaseKinds)('saga timeouts through the outbox on $name', (kind) => {
  let db: SqlDatabase;
  let tables: Tables;
  let drop: () => Promise<void>;
  let port: RedisPort;
  let admin: Redis;
  let results: string;
  beforeAll(async () => {
    db = await kind.open();
    ({ tables, drop } = await freshTables(db));
    await db.query(`CREATE TABLE ${tables.schema}.steps (instance text PRIMARY KEY, step text NOT NULL)`);
    port = connectIoredis(inject('redisUrl'));
    admin = adminClient();
  }, 120_000);
  afterAll(async () => {
    await drop?.();
    await db?.close();
    await port?.close();
    admin?.disconnect();
  });
  beforeEach(async () => {
    results = `${uniquePrefix()}:results`;
  });

  const orchestrator = () => createPublisher({ port, routes: { 'order.step-timeout': results, 'payment.charge': `${results}-commands` }, auth: { mode: 'hmac', keyId: 'orch-1', key: ORCHESTRATOR_KEY } });
  const target = (instance: string) => ({ command: commandOf(instance), eventType: 'order.step-timeout', producer: 'orchestrator' });
  /** The orchestrator's step transaction: its state, its command, and the command's timeout. */
  const issueCharge = (instance: string, afterMs: number, fail = false) =>
    db.transaction(async (tx) => {
      const outbox = createOutbox(tables);
      await tx.query(`INSERT INTO ${tables.schema}.steps VALUES ($1, 'charge')`, [instance]);
      await outbox.enqueue(tx, { producer: 'orchestrator', eventType: 'payment.charge', eventId: commandOf(instance).command_id, payload: '{}', orderingKey: instance });
      await outbox.enqueue(tx, stepTimeout({ ...target(instance), afterMs }));
      if (fail) throw new Error('the step failed after scheduling its timeout');
    });
  const relay = () => relayOutbox(db, tables, () => orchestrator(), { port });
  const scheduledIds = async () => (await listScheduled(port, results)).events.map((e) => e.eventId);
  /** The orchestrator's results consumer: what reaches its handler. */
  async function receive(): Promise<Array<{ envelope: ResultEnvelope; producer: string }>> {
    const seen: Array<{ envelope: ResultEnvelope; producer: string }> = [];
    const consumer = createResultConsumer({
      port,
      config: fastConfig(results),
      auth: { mode: 'hmac-keyring', keys: { 'orch-1': { producer: 'orchestrator', key: ORCHESTRATOR_KEY }, 'pay-1': { producer: 'payment', key: PAYMENT_KEY } } },
      allowedProducers: { charge: ['payment'] },
      timeoutProducer: 'orchestrator',
      handler: ({ envelope, producer }) => void seen.push({ envelope, producer }),
    });
    await consumer.ensureGroup();
    expect(await consumer.run({ mode: 'drain', deadline: Date.now() + 10_000 })).toMatchObject({ deadLettered: 0 });
    return seen;
  }

  it('rolled back with its step, the timeout never exists; committed, it is scheduled and reaches the orchestrator when due', async () => {
    await expect(issueCharge('i-rolled-back', 60_000, true)).rejects.toThrow('the step failed');
    const armedAt = Date.now();
    // Due far enough ahead that the relay and the first (empty) receive finish before it on a
    // loaded machine: that receive's claim would move a due timeout itself.
    await issueCharge('i-1', 4_000);
    expect(await relay()).toMatchObject({ published: 2, scheduledPublished: 1 });
    expect(await scheduledIds()).toEqual(['i-1:charge:execute:timeout']);
    const [due] = (await listScheduled(port, results)).events;
    expect(due!.dueMs).toBeGreaterThanOrEqual(armedAt + 4_000);
    expect(await receive()).toEqual([]);
    for (let i = 0; i < 200 && (await moveDueEvents(port, results)).moved === 0; i += 1) await sleepMs(50);
    const seen = await receive();
    expect(seen.map(({ envelope, producer }) => ({ id: envelope.result_id, producer, timeout: isStepTimeout(envelope), code: envelope.error?.code }))).toEqual([
      { id: 'i-1:charge:execute:timeout', producer: 'orchestrator', timeout: true, code: 'step_timed_out' },
    ]);
    expect(await db.query(`SELECT instance FROM ${tables.schema}.steps`)).toEqual([{ instance: 'i-1' }]);
  });

  it('cancelled by the transaction that completes the step, it never arrives', async () => {
    await issueCharge('i-2', 60_000);
    await db.transaction(async (tx) => {
      await tx.query(`UPDATE ${tables.schema}.steps SET step = 'ship' WHERE instance = $1`, ['i-2']);
      expect(await createOutbox(tables).enqueueCancel(tx, stepTimeoutRef(target('i-2')))).toBe('enqueued');
    });
    expect(await relay()).toMatchObject({ published: 2, scheduledPublished: 1, cancelsApplied: 1 });
    expect(await scheduledIds()).toEqual([]);
    await moveDueEvents(port, results);
    expect(await receive()).toEqual([]);
  });
});

describe('saga timeouts without a database: straight through the publisher', () => {
  let port: RedisPort;
  beforeAll(() => {
    port = connectIoredis(inject('redisUrl'));
  });
  afterAll(async () => {
    await port?.close();
  });

  it('a StepTimeout publishes for later as it is; cancelScheduled takes its ref; a retried publish stays cancelled', async () => {
    const results = `${uniquePrefix()}:results`;
    const publisher = createPublisher({ port, routes: { 'order.step-timeout': results }, auth: { mode: 'hmac', keyId: 'orch-1', key: ORCHESTRATOR_KEY } });
    const spec = { command: commandOf('i-3'), eventType: 'order.step-timeout', producer: 'orchestrator', afterMs: 60_000 };
    const timeout = stepTimeout(spec);
    const published = await publisher.publish(timeout);
    expect(published).toMatchObject({ eventId: 'i-3:charge:execute:timeout', entryId: '', duplicate: false, scheduled: { deliverAtMs: timeout.deliverAt } });
    expect(await cancelScheduled(port, results, stepTimeoutRef(spec).eventId)).toMatchObject({ status: 'cancelled' });
    expect(await publisher.publish(timeout)).toMatchObject({ duplicate: true, scheduled: { cancelled: true } });
    expect((await listScheduled(port, results)).total).toBe(0);
  });
});
