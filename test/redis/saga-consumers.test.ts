/**
 * SPEC §9 consumers and the envelope rows of §4, end to end: publish → run → read Redis.
 * A command consumer gates the route before its handler; a result consumer hands over the
 * authenticated producer and can restrict producers per step.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { StreamAuthInput } from '../../src/auth/modes';
import { markerKeyFor } from '../../src/entry/marker-key';
import type { Poller } from '../../src/consume/poller';
import { createPublisher, type Publisher } from '../../src/publish/publisher';
import type { RedisPort } from '../../src/redis/port';
import { createCapabilityCommandConsumer, createCommandConsumer } from '../../src/saga/command-consumer';
import type { SagaDelivery } from '../../src/saga/delivery';
import type { CommandEnvelope, ResultEnvelope } from '../../src/saga/envelopes';
import { createResultConsumer } from '../../src/saga/result-consumer';
import { Deferral, Rejection, type HandlerOutcome } from '../../src/verdict/verdict';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { fastConfig } from '../support/poller';
import { dltRecords, pendingIds } from '../support/redis';
import { command, DIGEST, OTHER_DIGEST, result, ROUTE, TRACEPARENT } from './saga-fixtures';

const ORCHESTRATOR_KEY = 'orchestrator-key-for-commands-01';
const INVENTORY_KEY = 'inventory-service-result-key-001';
const PAYMENTS_KEY = 'payments-service-result-key-0001';
const COMMAND_AUTH: StreamAuthInput = { mode: 'hmac', keyId: 'orch', key: ORCHESTRATOR_KEY, producer: 'orchestrator' };
const RESULT_KEYRING: StreamAuthInput = {
  mode: 'hmac-keyring',
  keys: { inv: { producer: 'inventory', key: INVENTORY_KEY }, pay: { producer: 'payments', key: PAYMENTS_KEY } },
};

describe.each(clientKinds)('saga consumers over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let seen: Array<SagaDelivery<CommandEnvelope | ResultEnvelope>>;
  let outcome: () => Promise<HandlerOutcome> | HandlerOutcome;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'saga');
  beforeEach(() => {
    seen = [];
    outcome = () => 'committed';
  });

  const handler = (delivery: SagaDelivery<CommandEnvelope | ResultEnvelope>) => {
    seen.push(delivery);
    return outcome();
  };
  const drain = (poller: Poller) => poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });
  const publisherWith = (keyId: string, key: string): Publisher =>
    createPublisher({ port, routes: { 'saga.command': stream, 'saga.result': stream }, auth: { mode: 'hmac', keyId, key } });
  const sendCommand = (envelope: Record<string, unknown>, eventId = String(envelope.command_id)) =>
    publisherWith('orch', ORCHESTRATOR_KEY).publish({ eventType: 'saga.command', eventId, payload: JSON.stringify(envelope), traceparent: TRACEPARENT });
  const sendResult = (keyId: string, key: string, envelope: Record<string, unknown>, eventId = String(envelope.result_id)) =>
    publisherWith(keyId, key).publish({ eventType: 'saga.result', eventId, payload: JSON.stringify(envelope) });

  async function commandConsumer(capability = false): Promise<Poller> {
    const options = { port, config: fastConfig(stream), auth: COMMAND_AUTH, handler };
    const { definitionDigest: _, ...capabilityRoute } = ROUTE;
    const poller = capability
      ? createCapabilityCommandConsumer({ ...options, route: capabilityRoute })
      : createCommandConsumer({ ...options, route: ROUTE });
    await poller.ensureGroup();
    return poller;
  }

  async function resultConsumer(allowedProducers?: Record<string, string[]>): Promise<Poller> {
    const poller = createResultConsumer({ port, config: fastConfig(stream), auth: RESULT_KEYRING, allowedProducers, handler });
    await poller.ensureGroup();
    return poller;
  }

  async function expectOnlyDeadLetter(poller: Poller, eventId: string, reason: string): Promise<void> {
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    const records = await dltRecords(admin, poller.config.keys.dlt);
    expect(records.map((r) => [r.event_id, r.reason])).toEqual([[eventId, reason]]);
    expect(await admin.exists(markerKeyFor(poller.config.keys, 'g', records[0]!.source_entry_id!))).toBe(1);
    expect(seen).toEqual([]);
  }

  it('hands a command handler the envelope, producer, trace context and delivery count, then acks', async () => {
    const consumer = await commandConsumer();
    await sendCommand(command('c1'));
    expect(await drain(consumer)).toMatchObject({ acked: 1, deadLettered: 0 });
    expect(seen).toHaveLength(1);
    const [delivery] = seen as [SagaDelivery<CommandEnvelope>];
    expect(delivery.envelope).toEqual(command('c1'));
    expect(delivery).toMatchObject({ producer: 'orchestrator', eventId: 'c1', deliveries: 1 });
    expect(delivery.trace).toMatchObject({ traceparent: TRACEPARENT, traceId: '4bf92f3577b34da6a3ce929d0e0e4736', sampled: true });
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    expect(await admin.xlen(consumer.config.keys.dlt)).toBe(0);
  });

  it('reports the delivery count of a redelivered command', async () => {
    const consumer = await commandConsumer();
    const { entryId } = await sendCommand(command('c1'));
    outcome = () => Promise.reject(new Error('database unreachable'));
    expect(await drain(consumer)).toMatchObject({ retained: 1 });
    await admin.xclaim(stream, 'g', 'c1', 0, entryId, 'IDLE', 60_000); // idle enough to be reclaimed
    outcome = () => 'committed';
    expect(await drain(consumer)).toMatchObject({ acked: 1, reclaimed: 1 });
    expect(seen.map((d) => d.deliveries)).toEqual([1, 3]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a command_id other than the event_id', { command_id: 'forged' }, 'envelope_id_mismatch'],
    ['another workflow', { workflow: 'refund' }, 'route_workflow_mismatch'],
    ['another definition version', { definition_version: 4 }, 'route_version_mismatch'],
    ['another definition digest', { definition_digest: OTHER_DIGEST }, 'route_digest_mismatch'],
    ['another step', { step: 'charge_payment' }, 'route_step_mismatch'],
    ['an envelope failing its schema', { action: 'explode' }, 'payload_schema_invalid'],
  ])('dead-letters a command with %s before its handler', async (_, change, reason) => {
    const consumer = await commandConsumer();
    await sendCommand(command('c1', change), 'c1');
    expect(await drain(consumer)).toMatchObject({ deadLettered: 1, authRejected: 0, acked: 0 });
    await expectOnlyDeadLetter(consumer, 'c1', reason);
  });

  it('dead-letters a payload that is not JSON', async () => {
    const consumer = await commandConsumer();
    await publisherWith('orch', ORCHESTRATOR_KEY).publish({ eventType: 'saga.command', eventId: 'c1', payload: '{"command_id": "c1",' });
    expect(await drain(consumer)).toMatchObject({ deadLettered: 1, authRejected: 0 });
    await expectOnlyDeadLetter(consumer, 'c1', 'payload_undecodable');
  });

  it('lets a capability consumer accept any digest, still gating the step', async () => {
    const consumer = await commandConsumer(true);
    await sendCommand(command('c1', { definition_digest: OTHER_DIGEST }));
    await sendCommand(command('c2', { step: 'ship' }));
    expect(await drain(consumer)).toMatchObject({ acked: 1, deadLettered: 1 });
    expect(seen.map((d) => d.eventId)).toEqual(['c1']);
    expect((await dltRecords(admin, consumer.config.keys.dlt)).map((r) => r.reason)).toEqual(['route_step_mismatch']);
  });

  it('maps a handler Rejection to a dead-letter and a Deferral to retain', async () => {
    const consumer = await commandConsumer();
    await sendCommand(command('c1'));
    outcome = () => Promise.reject(new Deferral('saga paused'));
    expect(await drain(consumer)).toMatchObject({ retained: 1 });
    expect(await pendingIds(admin, stream, 'g')).toHaveLength(1);
    await sendCommand(command('c2'));
    outcome = () => Promise.reject(new Rejection('stock_unknown'));
    expect(await drain(consumer)).toMatchObject({ deadLettered: 1 });
    expect((await dltRecords(admin, consumer.config.keys.dlt)).map((r) => [r.event_id, r.reason])).toEqual([['c2', 'stock_unknown']]);
  });

  it('dead-letters a command whose flow_key is not its signed instance_id, before its handler', async () => {
    const consumer = await commandConsumer();
    const orchestrator = publisherWith('orch', ORCHESTRATOR_KEY);
    await orchestrator.publish({ eventType: 'saga.command', eventId: 'c1', payload: JSON.stringify(command('c1')), flowKey: 'order-99' });
    expect(await drain(consumer)).toMatchObject({ deadLettered: 1, authRejected: 0, acked: 0 });
    await expectOnlyDeadLetter(consumer, 'c1', 'flow_key_mismatch');
    await orchestrator.publish({ eventType: 'saga.command', eventId: 'c2', payload: JSON.stringify(command('c2')), flowKey: 'order-17' });
    expect(await drain(consumer)).toMatchObject({ acked: 1 });
    expect(seen.map((d) => d.eventId)).toEqual(['c2']);
  });

  it('reads no flow key with flow off: a consumer whose rows carry another ordering key can opt out', async () => {
    const consumer = createCommandConsumer({ port, config: fastConfig(stream, { flow: false }), auth: COMMAND_AUTH, route: ROUTE, handler });
    await consumer.ensureGroup();
    const orchestrator = publisherWith('orch', ORCHESTRATOR_KEY);
    await orchestrator.publish({ eventType: 'saga.command', eventId: 'c1', payload: JSON.stringify(command('c1')), flowKey: 'tenant-4' });
    expect(await drain(consumer)).toMatchObject({ acked: 1, deadLettered: 0 });
    expect(seen.map((d) => d.eventId)).toEqual(['c1']);
  });

  it('keeps a saga instance in strict order across runs by default: a later command waits for the retained one, another instance goes on', async () => {
    const first = await commandConsumer();
    expect(first.config.flow).toEqual({ limit: 1, order: 'strict' });
    const orchestrator = publisherWith('orch', ORCHESTRATOR_KEY);
    const send = (id: string, instance: string) =>
      orchestrator.publish({ eventType: 'saga.command', eventId: id, payload: JSON.stringify(command(id, { instance_id: instance })), flowKey: instance });
    await send('c1', 'order-17');
    outcome = () => Promise.reject(new Deferral('saga paused'));
    expect(await drain(first)).toMatchObject({ retained: 1 });
    await send('c2', 'order-17');
    await send('c3', 'order-18');
    outcome = () => 'committed';
    const other = createCommandConsumer({ port, config: fastConfig(stream, { consumer: 'c2' }), auth: COMMAND_AUTH, route: ROUTE, handler });
    expect(await drain(other)).toMatchObject({ acked: 1, flowParked: 1 });
    expect(seen.map((d) => d.eventId)).toEqual(['c1', 'c3']);
  });

  it('hands a result handler the producer its keyring key stands for', async () => {
    const consumer = await resultConsumer();
    await sendResult('inv', INVENTORY_KEY, result('r1'));
    await sendResult('pay', PAYMENTS_KEY, result('r2', { step: 'charge_payment', outcome: 'failed', output: undefined, error: { code: 'declined', message: 'card declined' } }));
    expect(await drain(consumer)).toMatchObject({ acked: 2, deadLettered: 0 });
    expect(seen.map((d) => [d.eventId, d.producer, (d.envelope as ResultEnvelope).outcome])).toEqual([
      ['r1', 'inventory', 'succeeded'],
      ['r2', 'payments', 'failed'],
    ]);
    expect(seen[0]!.envelope).toMatchObject({ result_id: 'r1', definition_digest: DIGEST });
  });

  it('dead-letters a result from a producer not allowed for its step, as an auth rejection', async () => {
    const consumer = await resultConsumer({ reserve_stock: ['inventory'], charge_payment: ['payments'] });
    await sendResult('pay', PAYMENTS_KEY, result('r1')); // payments reporting inventory's step
    expect(await drain(consumer)).toMatchObject({ deadLettered: 1, authRejected: 1, acked: 0 });
    await expectOnlyDeadLetter(consumer, 'r1', 'producer_not_allowed');
  });

  it('accepts nobody for a step the allow-list does not name', async () => {
    const consumer = await resultConsumer({ reserve_stock: ['inventory'] });
    await sendResult('inv', INVENTORY_KEY, result('r1', { step: 'ship' }));
    await sendResult('inv', INVENTORY_KEY, result('r2'));
    expect(await drain(consumer)).toMatchObject({ acked: 1, deadLettered: 1, authRejected: 1 });
    expect(seen.map((d) => d.eventId)).toEqual(['r2']);
    expect((await dltRecords(admin, consumer.config.keys.dlt)).map((r) => [r.event_id, r.reason])).toEqual([['r1', 'producer_not_allowed']]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a result_id other than the event_id', { result_id: 'forged' }, 'envelope_id_mismatch'],
    ['a failed outcome without an error', { outcome: 'failed' }, 'payload_schema_invalid'],
  ])('dead-letters a result with %s', async (_, change, reason) => {
    const consumer = await resultConsumer();
    await sendResult('inv', INVENTORY_KEY, result('r1', change), 'r1');
    expect(await drain(consumer)).toMatchObject({ deadLettered: 1, authRejected: 0 });
    await expectOnlyDeadLetter(consumer, 'r1', reason);
  });

  it('names the configured producer on an exclusive stream', async () => {
    const consumer = createResultConsumer({ port, config: fastConfig(stream), auth: { mode: 'exclusive-stream', producer: 'inventory' }, handler });
    await consumer.ensureGroup();
    await createPublisher({ port, routes: { 'saga.result': stream }, auth: { mode: 'exclusive-stream' } }).publish({
      eventType: 'saga.result',
      eventId: 'r1',
      payload: JSON.stringify(result('r1')),
    });
    expect(await drain(consumer)).toMatchObject({ acked: 1 });
    expect(seen.map((d) => d.producer)).toEqual(['inventory']);
  });
});

describe('saga consumer configuration', () => {
  const port = { transport: 'tcp', cluster: false, exchange: () => Promise.reject(new Error('unused')), close: async () => {} } as RedisPort;

  const problemsOf = (build: () => unknown) => {
    try {
      build();
    } catch (e) {
      return (e as { problems: Array<{ path: string; message: string }> }).problems;
    }
    return [];
  };
  const commandConsumerWith = (config: Parameters<typeof createCommandConsumer>[0]['config'], orderingKey?: () => string) =>
    createCommandConsumer({ port, config, auth: { mode: 'hmac', keyId: 'k', key: ORCHESTRATOR_KEY, producer: 'orchestrator' }, route: ROUTE, handler: () => {}, ...(orderingKey ? { orderingKey } : {}) });

  it('turns strict flow control on by default, and off with flow: false', () => {
    expect(commandConsumerWith({ stream: 's', group: 'g', consumer: 'c' }).config.flow).toEqual({ limit: 1, order: 'strict' });
    expect(commandConsumerWith({ stream: 's', group: 'g', consumer: 'c', flow: { limit: 3 } }).config.flow).toEqual({ limit: 3, order: 'none' });
    expect(commandConsumerWith({ stream: 's', group: 'g', consumer: 'c', flow: false }).config.flow).toBe(false);
  });

  it('refuses what the default rules out with a message that names the way out', () => {
    expect(problemsOf(() => commandConsumerWith({ stream: 's', group: 'g', consumer: 'c', wait: 'block' }))).toEqual([
      { path: 'config.wait', message: expect.stringContaining('set config.flow to false') },
    ]);
    expect(problemsOf(() => commandConsumerWith({ stream: 's', group: 'g', consumer: 'c', concurrency: 4 }, () => 'k'))).toEqual([
      { path: 'orderingKey', message: expect.stringContaining('set config.flow to false') },
    ]);
    expect(problemsOf(() => commandConsumerWith({ stream: 's', group: 'g', consumer: 'c', wait: 'block', flow: false }))).toEqual([]);
  });

  it('lists every problem of config, auth and route at once', () => {
    let error: unknown;
    try {
      createCommandConsumer({
        port,
        config: { stream: 'has space', group: 'g', consumer: 'c' },
        auth: { mode: 'hmac', keyId: 'k', key: ORCHESTRATOR_KEY },
        route: { workflow: 'order', definitionVersion: 0, definitionDigest: 'ABC', step: '' },
        handler: () => {},
      });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'CONFIG_INVALID' });
    const paths = (error as { problems: Array<{ path: string }> }).problems.map((p) => p.path).sort();
    expect(paths).toEqual(['auth.producer', 'config.stream', 'route.definitionDigest', 'route.definitionVersion', 'route.step']);
  });
});
