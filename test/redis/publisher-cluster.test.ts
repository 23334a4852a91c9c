/**
 * The publisher on Redis Cluster (3 masters, private): a stream and its dedupe records
 * share a hash tag, so publish.lua runs on one slot; a route that would span slots is
 * refused at construction, before anything is sent.
 */
import type { Cluster } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createPublisher } from '../../src/publish/publisher';
import type { RedisPort } from '../../src/redis/port';
import { createResultConsumer } from '../../src/saga/result-consumer';
import { fastConfig } from '../support/poller';
import { uniquePrefix } from '../support/redis';
import { useClusterPerSuite } from '../support/redis-suite';
import { result } from './saga-fixtures';

const auth = { mode: 'hmac', keyId: 'inv', key: 'cluster-publisher-key-000000001' } as const;

describe('publisher on redis cluster (ioredis)', () => {
  let admin: Cluster;
  let port: RedisPort;
  useClusterPerSuite((h) => ({ admin, port } = h));

  it('publishes with dedupe on one slot, and the consumer verifies what it wrote', async () => {
    const tag = uniquePrefix();
    const stream = `results:{${tag}}`;
    const publisher = createPublisher({ port, routes: { 'saga.result': stream }, auth, keyTag: tag });
    const [first, second] = await publisher.publishBatch([
      { eventType: 'saga.result', eventId: 'r1', payload: JSON.stringify(result('r1')) },
      { eventType: 'saga.result', eventId: 'r2', payload: JSON.stringify(result('r2')) },
    ]);
    // A true repeat (same event id, same body) inside the window returns the original entry.
    expect((await publisher.publish({ eventType: 'saga.result', eventId: 'r1', payload: JSON.stringify(result('r1')) })).entryId).toBe(first!.entryId);
    expect(await admin.xlen(stream)).toBe(2);
    // The dedupe record holds the entry id and a digest of the body (a reused key is told apart).
    expect(await admin.get(`${stream}:pub:r2`)).toMatch(new RegExp(`^${second!.entryId} [0-9a-f]{40}$`));

    const producers: string[] = [];
    const consumer = createResultConsumer({
      port,
      config: fastConfig(stream, { keyTag: tag }),
      auth: { mode: 'hmac-keyring', keys: { inv: { producer: 'inventory', key: auth.key } } },
      handler: ({ producer }) => {
        producers.push(producer);
      },
    });
    await consumer.ensureGroup();
    expect(await consumer.run({ mode: 'drain' })).toMatchObject({ acked: 2, authRejected: 0 });
    expect(producers).toEqual(['inventory', 'inventory']);
  });

  it('refuses a batch spanning hash tags, sending nothing', async () => {
    const [a, b] = [`a:{${uniquePrefix()}}`, `b:{${uniquePrefix()}}`];
    const publisher = createPublisher({ port, routes: { a, b }, auth });
    const batch = [
      { eventType: 'a', eventId: 'e1', payload: 'x' },
      { eventType: 'b', eventId: 'e2', payload: 'y' },
    ];
    await expect(publisher.publishBatch(batch)).rejects.toMatchObject({ code: 'PUBLISH_EVENT_INVALID', transient: false });
    expect(publisher.duplicateHints).toBe(0);
    expect(await admin.exists(a)).toBe(0);
    expect(await admin.exists(b)).toBe(0);
  });

  it('publishes to a stream without a hash tag when the dedupe window is off (a plain XADD: its size keys would sit on other slots)', async () => {
    const stream = `untagged-${uniquePrefix()}`;
    const publisher = createPublisher({ port, routes: { placed: stream }, auth, dedupeWindowSeconds: 0 });
    const [a, b] = await publisher.publishBatch([
      { eventType: 'placed', eventId: 'u1', payload: 'x' },
      { eventType: 'placed', eventId: 'u2', payload: 'y' },
    ]);
    expect(a!.entryId).not.toBe(b!.entryId);
    expect(await admin.xlen(stream)).toBe(2);
  });

  it('refuses a route without a hash tag when the dedupe window is on', () => {
    expect(() => createPublisher({ port, routes: { placed: 'orders-untagged' }, auth })).toThrow(/hash tag/);
    expect(() => createPublisher({ port, routes: { placed: 'orders-untagged' }, auth, dedupeWindowSeconds: 0 })).not.toThrow();
  });
});
