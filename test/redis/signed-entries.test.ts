/**
 * SPEC §3.2 and the signature rows of §4, end to end: entries are published (or hand-signed
 * and tampered with), a consumer runs, and the outcome is read from Redis — PEL, DLT record,
 * marker — with auth rejections counted in the run report. Includes key rotation.
 */
import type { Redis } from 'ioredis';
import { beforeEach, describe, expect, it } from 'vitest';
import type { StreamAuthInput } from '../../src/auth/modes';
import { markerKeyFor } from '../../src/entry/marker-key';
import type { Poller } from '../../src/consume/poller';
import { createPublisher } from '../../src/publish/publisher';
import type { RedisPort } from '../../src/redis/port';
import { createCommandConsumer } from '../../src/saga/command-consumer';
import type { SagaDelivery } from '../../src/saga/delivery';
import type { CommandEnvelope } from '../../src/saga/envelopes';
import { clientKinds } from '../support/clients';
import { useRedisPerTest } from '../support/redis-suite';
import { fastConfig } from '../support/poller';
import { dltRecords, pendingIds } from '../support/redis';
import { command, handSigned, OTHER_TRACEPARENT, ROUTE, TRACEPARENT } from './saga-fixtures';
import { appendFields, entriesOf } from './stream-entries';

const KEY = 'orchestrator-signing-key-000001';
const OTHER_KEY = 'someone-elses-signing-key-00002';
const HMAC: StreamAuthInput = { mode: 'hmac', keyId: 'k1', key: KEY, producer: 'orchestrator' };

describe.each(clientKinds)('signed entries over $name', (kind) => {
  let admin: Redis;
  let port: RedisPort;
  let stream: string;
  let seen: Array<SagaDelivery<CommandEnvelope>>;

  useRedisPerTest(kind, (h) => ({ admin, port, stream } = h), 'commands');
  beforeEach(() => {
    seen = [];
  });

  async function consumerOn(name: string, auth: StreamAuthInput = HMAC): Promise<Poller> {
    const poller = createCommandConsumer({
      port,
      config: fastConfig(name),
      auth,
      route: ROUTE,
      handler: (delivery) => {
        seen.push(delivery);
      },
    });
    await poller.ensureGroup();
    return poller;
  }
  const drain = (poller: Poller) => poller.run({ mode: 'drain', deadline: Date.now() + 5_000 });

  /** The entry was dead-lettered with `reason`: one DLT record with its original fields, a marker, an empty PEL. */
  async function expectDeadLettered(poller: Poller, entryId: string, eventId: string, reason: string): Promise<void> {
    expect(await pendingIds(admin, poller.config.keys.stream, 'g')).toEqual([]);
    const records = await dltRecords(admin, poller.config.keys.dlt);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ reason, event_id: eventId, source_entry_id: entryId, source_stream: poller.config.keys.stream });
    expect(await admin.get(markerKeyFor(poller.config.keys, 'g', entryId))).toBe(entryId);
    expect(seen).toEqual([]);
  }

  it('acks a published, signed command and hands the handler its producer', async () => {
    const consumer = await consumerOn(stream);
    const publisher = createPublisher({ port, routes: { 'saga.command': stream }, auth: HMAC });
    await publisher.publish({ eventType: 'saga.command', eventId: 'c1', payload: JSON.stringify(command('c1')), traceparent: TRACEPARENT });
    const report = await drain(consumer);
    expect(report).toMatchObject({ acked: 1, deadLettered: 0, authRejected: 0 });
    expect(seen.map((d) => d.producer)).toEqual(['orchestrator']);
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
    expect(await admin.xlen(consumer.config.keys.dlt)).toBe(0);
  });

  type Tamper = (fields: Map<string, Buffer | string>) => void;
  it.each<[string, Tamper, string]>([
    ['a missing signature', (f) => f.delete('sig'), 'signature_missing'],
    ['a signature that is not hex', (f) => f.set('sig', 'zz'.repeat(32)), 'signature_invalid'],
    ['an uppercase-hex signature', (f) => f.set('sig', String(f.get('sig')).toUpperCase()), 'signature_invalid'],
    ['a truncated signature', (f) => f.set('sig', String(f.get('sig')).slice(0, 62)), 'signature_invalid'],
    ['a wrong key id', (f) => f.set('key_id', 'k2'), 'signature_key_unknown'],
    ['no key id', (f) => f.delete('key_id'), 'signature_key_unknown'],
    ['a payload altered after signing', (f) => f.set('payload', JSON.stringify(command('c1', { input: { sku: 'A-1', qty: 200 } }))), 'signature_invalid'],
    ['an event type altered after signing', (f) => f.set('event', 'saga.other'), 'signature_invalid'],
    ['a replaced traceparent', (f) => f.set('traceparent', OTHER_TRACEPARENT), 'signature_invalid'],
    ['a removed traceparent', (f) => f.delete('traceparent'), 'signature_invalid'],
    ['a traceparent emptied', (f) => f.set('traceparent', ''), 'signature_invalid'],
  ])('dead-letters %s as an auth rejection', async (_, tamper, reason) => {
    const consumer = await consumerOn(stream);
    const fields = await handSigned({ stream, eventId: 'c1', payload: JSON.stringify(command('c1')), traceparent: TRACEPARENT, keyId: 'k1', key: KEY });
    tamper(fields);
    const id = await appendFields(admin, stream, fields);
    const report = await drain(consumer);
    expect(report).toMatchObject({ deadLettered: 1, authRejected: 1, acked: 0 });
    await expectDeadLettered(consumer, id, 'c1', reason);
    // The evidence is the entry byte-for-byte, signature included.
    const record = (await dltRecords(admin, consumer.config.keys.dlt))[0]!;
    for (const [name, value] of fields) expect(record[`orig_${name}`]).toBe(value.toString());
  });

  it('counts an unsigned entry as an auth rejection even when it lacks event_id too', async () => {
    const consumer = await consumerOn(stream);
    await appendFields(admin, stream, new Map([['payload', '{}']]));
    const report = await drain(consumer);
    expect(report).toMatchObject({ deadLettered: 1, authRejected: 1 });
    expect((await dltRecords(admin, consumer.config.keys.dlt))[0]).toMatchObject({ reason: 'signature_missing', event_id: '' });
  });

  it('dead-letters a traceparent added to an entry signed without one', async () => {
    const consumer = await consumerOn(stream);
    const fields = await handSigned({ stream, eventId: 'c1', payload: JSON.stringify(command('c1')), keyId: 'k1', key: KEY });
    fields.set('traceparent', TRACEPARENT);
    const id = await appendFields(admin, stream, fields);
    expect(await drain(consumer)).toMatchObject({ authRejected: 1 });
    await expectDeadLettered(consumer, id, 'c1', 'signature_invalid');
  });

  it('dead-letters an entry signed with another key under the right key id', async () => {
    const consumer = await consumerOn(stream);
    const fields = await handSigned({ stream, eventId: 'c1', payload: JSON.stringify(command('c1')), keyId: 'k1', key: OTHER_KEY });
    const id = await appendFields(admin, stream, fields);
    expect(await drain(consumer)).toMatchObject({ authRejected: 1 });
    await expectDeadLettered(consumer, id, 'c1', 'signature_invalid');
  });

  it('dead-letters an entry copied byte-for-byte to another stream (cross-stream replay)', async () => {
    const replica = `${stream}-replica`;
    const original = await consumerOn(stream);
    const copy = await consumerOn(replica);
    const publisher = createPublisher({ port, routes: { 'saga.command': stream }, auth: HMAC });
    await publisher.publish({ eventType: 'saga.command', eventId: 'c1', payload: JSON.stringify(command('c1')), traceparent: TRACEPARENT });
    const [[, stored]] = (await entriesOf(admin, stream)) as [[string, Map<string, Buffer>]];
    const copiedId = await appendFields(admin, replica, stored);

    expect(await drain(copy)).toMatchObject({ deadLettered: 1, authRejected: 1 });
    await expectDeadLettered(copy, copiedId, 'c1', 'signature_invalid');
    expect(await drain(original)).toMatchObject({ acked: 1, authRejected: 0 });
    expect(seen).toHaveLength(1);
  });

  it('dead-letters an entry signed with a key that is not in the keyring', async () => {
    const keyring: StreamAuthInput = { mode: 'hmac-keyring', keys: { k1: { producer: 'orchestrator', key: KEY } } };
    const consumer = await consumerOn(stream, keyring);
    const signed = await handSigned({ stream, eventId: 'c1', payload: JSON.stringify(command('c1')), keyId: 'k9', key: OTHER_KEY });
    const id = await appendFields(admin, stream, signed);
    expect(await drain(consumer)).toMatchObject({ deadLettered: 1, authRejected: 1 });
    await expectDeadLettered(consumer, id, 'c1', 'signature_key_unknown');
  });

  it('accepts both keys during a rotation, and dead-letters the old one once it is removed', async () => {
    const ring = (keys: Record<string, string>): StreamAuthInput => ({
      mode: 'hmac-keyring',
      keys: Object.fromEntries(Object.entries(keys).map(([id, key]) => [id, { producer: 'billing', key }])),
    });
    const OLD = 'billing-key-2025-rotated-out-0001';
    const NEW = 'billing-key-2026-rotated-in-00002';
    const publisherFor = (keyId: string, key: string) =>
      createPublisher({ port, routes: { 'saga.command': stream }, auth: { mode: 'hmac', keyId, key } });
    const oldPublisher = publisherFor('2025', OLD);
    const newPublisher = publisherFor('2026', NEW);
    const payload = (id: string) => JSON.stringify(command(id));

    const during = await consumerOn(stream, ring({ '2025': OLD, '2026': NEW }));
    await oldPublisher.publish({ eventType: 'saga.command', eventId: 'c1', payload: payload('c1') });
    await newPublisher.publish({ eventType: 'saga.command', eventId: 'c2', payload: payload('c2') });
    expect(await drain(during)).toMatchObject({ acked: 2, deadLettered: 0 });
    expect(seen.map((d) => [d.eventId, d.producer])).toEqual([
      ['c1', 'billing'],
      ['c2', 'billing'],
    ]);

    seen = [];
    const after = await consumerOn(stream, ring({ '2026': NEW }));
    const stale = await oldPublisher.publish({ eventType: 'saga.command', eventId: 'c3', payload: payload('c3') });
    await newPublisher.publish({ eventType: 'saga.command', eventId: 'c4', payload: payload('c4') });
    expect(await drain(after)).toMatchObject({ acked: 1, deadLettered: 1, authRejected: 1 });
    expect(seen.map((d) => d.eventId)).toEqual(['c4']);
    const [record] = await dltRecords(admin, after.config.keys.dlt);
    expect(record).toMatchObject({ reason: 'signature_key_unknown', event_id: 'c3', source_entry_id: stale.entryId, orig_key_id: '2025' });
    expect(await pendingIds(admin, stream, 'g')).toEqual([]);
  });
});
