/**
 * SPEC §6.1 publisher, end to end: what lands in Redis (fields, signature, dedupe record),
 * what never does (unknown types, invalid events), one round trip per batch, the dedupe
 * window, and a half-failed batch whose retry appends only what is missing.
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SecretKey } from '../../src/auth/secret';
import { signEntry } from '../../src/auth/signature';
import { publisherDuplicateHintsTotal } from '../../src/publish/hints';
import { createPublisher, type PublisherOptions } from '../../src/publish/publisher';
import { meterPort, type MeteredPort } from '../../src/redis/metered';
import { clientKinds } from '../support/clients';
import { adminClient, uniquePrefix } from '../support/redis';
import { entriesOf } from './stream-entries';

const KEY = 'publisher-test-key-0123456789abcdef';
const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';


describe.each(clientKinds)('publisher over $name', (kind) => {
  let admin: Redis;
  let port: MeteredPort;
  let prefix: string;
  let orders: string;
  let payments: string;

  beforeAll(() => {
    admin = adminClient();
  });
  afterAll(() => {
    admin.disconnect();
  });
  beforeEach(() => {
    port = meterPort(kind.connect());
    prefix = uniquePrefix();
    orders = `${prefix}:orders`;
    payments = `${prefix}:payments`;
  });
  afterEach(async () => {
    await port.close();
  });

  const publisherWith = (overrides: Partial<PublisherOptions> = {}) =>
    createPublisher({
      port,
      routes: { 'order.placed': orders, 'payment.charged': payments },
      auth: { mode: 'hmac', keyId: 'k1', key: KEY },
      ...overrides,
    });

  it('keeps publishing to its configured streams when someone tries to redirect a route', async () => {
    const publisher = publisherWith();
    const routes = publisher.config.routes as unknown as Map<string, { stream: string }>;
    const route = routes.get('order.placed')!;
    expect(() => routes.set('order.placed', { ...route, stream: payments })).toThrow(TypeError);
    const result = await publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: '{"order":"o1"}' });
    expect(result.stream).toBe(orders);
    expect(await admin.xlen(orders)).toBe(1);
    expect(await admin.exists(payments)).toBe(0);
  });

  it('appends the §3.1 fields, signed over the stream it wrote to', async () => {
    const result = await publisherWith().publish({ eventType: 'order.placed', eventId: 'e1', payload: '{"order":"o1"}', traceparent: TP });
    expect(result).toEqual({ eventId: 'e1', eventType: 'order.placed', stream: orders, entryId: expect.any(String), duplicate: false });
    const [[id, fields]] = (await entriesOf(admin, orders)) as [[string, Map<string, Buffer>]];
    expect(id).toBe(result.entryId);
    expect([...fields.keys()]).toEqual(['event', 'event_id', 'payload', 'traceparent', 'key_id', 'sig']);
    expect(fields.get('payload')!.toString()).toBe('{"order":"o1"}');
    expect(fields.get('key_id')!.toString()).toBe('k1');
    const expected = await signEntry(SecretKey.from(KEY), {
      stream: orders,
      eventId: 'e1',
      eventType: 'order.placed',
      payload: '{"order":"o1"}',
      traceparent: TP,
    });
    expect(fields.get('sig')!.toString()).toBe(expected);
    // The dedupe record: the entry id, then the SHA-1 digest of the event's body.
    expect(await admin.get(`${orders}:pub:e1`)).toMatch(new RegExp(`^${result.entryId} [0-9a-f]{40}$`));
    const ttl = await admin.ttl(`${orders}:pub:e1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600);
  });

  it('writes no signature fields on an exclusive stream', async () => {
    await publisherWith({ auth: { mode: 'exclusive-stream' } }).publish({ eventType: 'order.placed', eventId: 'e1', payload: 'x' });
    const [[, fields]] = (await entriesOf(admin, orders)) as [[string, Map<string, Buffer>]];
    expect([...fields.keys()]).toEqual(['event', 'event_id', 'payload']);
  });

  it('fails an unknown event type with nothing written, even inside a batch', async () => {
    const publisher = publisherWith();
    await expect(publisher.publish({ eventType: 'order.cancelled', eventId: 'e1', payload: 'x' })).rejects.toMatchObject({
      code: 'PUBLISH_ROUTE_UNKNOWN',
      transient: false,
    });
    await expect(
      publisher.publishBatch([
        { eventType: 'order.placed', eventId: 'e2', payload: 'x' },
        { eventType: 'nope', eventId: 'e3', payload: 'x' },
      ]),
    ).rejects.toMatchObject({ code: 'PUBLISH_ROUTE_UNKNOWN' });
    expect(port.roundTrips).toBe(0);
    expect(await admin.keys(`${prefix}*`)).toEqual([]);
    expect(publisher.duplicateHints).toBe(0);
  });

  it.each([
    ['an event_id with a space', { eventId: 'e 1' }, 'event_id'],
    ['an empty event_id', { eventId: '' }, 'event_id'],
    // A consumer dead-letters these as event_id_invalid (SPEC §3.4): never publish them.
    ['an event_id with a BOM', { eventId: '\ufeffe1' }, 'event_id'],
    ['a non-ASCII event_id', { eventId: 'é1' }, 'event_id'],
    ['an event_id of 257 characters', { eventId: 'e'.repeat(257) }, 'event_id'],
    ['a malformed traceparent', { traceparent: 'not-a-traceparent' }, 'traceparent'],
    ['a payload of the wrong type', { payload: 42 as unknown as string }, 'payload'],
  ])('refuses %s with nothing written, naming the field', async (_, change, field) => {
    await expect(publisherWith().publish({ eventType: 'order.placed', eventId: 'e1', payload: 'x', ...change })).rejects.toMatchObject({
      code: 'PUBLISH_EVENT_INVALID',
      field,
    });
    expect(port.roundTrips).toBe(0);
    expect(await admin.keys(`${prefix}*`)).toEqual([]);
  });

  it('returns the original entry id inside the dedupe window and appends nothing', async () => {
    const publisher = publisherWith();
    const first = await publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: 'first' });
    const again = await publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: 'first' });
    expect(again).toEqual({ ...first, duplicate: true });
    const [inBatch] = await publisher.publishBatch([{ eventType: 'order.placed', eventId: 'e1', payload: 'first' }]);
    expect(inBatch).toEqual({ ...first, duplicate: true });
    expect(await admin.xlen(orders)).toBe(1);
    expect((await entriesOf(admin, orders))[0]![1].get('payload')!.toString()).toBe('first');
  });

  it('refuses the same event_id with a different body inside the window (PUBLISH_KEY_REUSED), appending nothing', async () => {
    const publisher = publisherWith();
    await publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: 'first' });
    await expect(publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: 'changed' })).rejects.toMatchObject({ code: 'PUBLISH_KEY_REUSED', transient: false });
    expect(await admin.xlen(orders)).toBe(1);
  });

  it('appends every publish when the dedupe window is off', async () => {
    const publisher = publisherWith({ dedupeWindowSeconds: 0 });
    const first = await publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: 'x' });
    const second = await publisher.publish({ eventType: 'order.placed', eventId: 'e1', payload: 'x' });
    expect(second.entryId).not.toBe(first.entryId);
    expect(await admin.xlen(orders)).toBe(2);
    expect(await admin.exists(`${orders}:pub:e1`)).toBe(0);
  });

  it.each([
    ['on', 600],
    ['off', 0],
  ])('publishes a batch of 500 events in one round trip (dedupe %s)', async (_, window) => {
    const publisher = publisherWith({ dedupeWindowSeconds: window });
    await publisher.publish({ eventType: 'order.placed', eventId: 'warm-up', payload: 'x' }); // loads the script once
    const events = Array.from({ length: 500 }, (_, i) => ({
      eventType: i % 2 === 0 ? 'order.placed' : 'payment.charged',
      eventId: `e${i}`,
      payload: JSON.stringify({ n: i }),
    }));
    const before = port.roundTrips;
    const results = await publisher.publishBatch(events);
    expect(port.roundTrips - before).toBe(1);
    expect(results.map((r) => r.eventId)).toEqual(events.map((e) => e.eventId));
    expect(results.every((r) => !r.duplicate)).toBe(true);
    expect(await admin.xlen(orders)).toBe(251);
    expect(await admin.xlen(payments)).toBe(250);
    const stored = await entriesOf(admin, payments);
    expect(stored.map(([id]) => id)).toEqual(results.filter((r) => r.stream === payments).map((r) => r.entryId));
    expect(stored.map(([, f]) => f.get('event_id')!.toString())).toEqual(events.filter((_, i) => i % 2 === 1).map((e) => e.eventId));
  });

  it('fails a batch it could not append as transient, and a retry appends only what is missing', async () => {
    const publisher = publisherWith();
    const events = [
      { eventType: 'order.placed', eventId: 'e1', payload: 'a' },
      { eventType: 'payment.charged', eventId: 'e2', payload: 'b' },
    ];
    await admin.set(payments, 'not a stream'); // the second append fails with WRONGTYPE
    const totalBefore = publisherDuplicateHintsTotal();
    const error = await publisher.publishBatch(events).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'PUBLISH_APPEND_FAILED', transient: true, name: 'PublishError' });
    expect(publisher.duplicateHints).toBe(2);
    expect(publisherDuplicateHintsTotal() - totalBefore).toBe(2);
    // publish.lua writes the dedupe record only after its XADD succeeded.
    expect(await admin.exists(`${payments}:pub:e2`)).toBe(0);

    await admin.del(payments);
    const [first, second] = await publisher.publishBatch(events);
    expect(first!.duplicate).toBe(true);
    expect(second!.duplicate).toBe(false);
    expect(await admin.xlen(orders)).toBe(1);
    expect(await admin.xlen(payments)).toBe(1);
  });
});
