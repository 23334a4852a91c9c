/**
 * SPEC §6.1 with Redis unreachable (TCP client behind a proxy the test cuts, while the
 * server keeps its state for inspection): a publish fails with the typed transient error
 * within its time budget, counts its duplicate hints, and leaves nothing behind.
 */
import { inject } from 'vitest';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publisherDuplicateHintsTotal } from '../../src/publish/hints';
import { createPublisher } from '../../src/publish/publisher';
import { connectIoredis } from '../../src/redis/ioredis-port';
import { adminClient, uniquePrefix } from '../support/redis';
import { startTcpProxy } from '../support/tcp-proxy';

const auth = { mode: 'hmac', keyId: 'k1', key: 'unreachable-test-key-0123456789' } as const;

describe('publisher with Redis unreachable (ioredis)', () => {
  let admin: Redis;
  beforeAll(() => {
    admin = adminClient();
  });
  afterAll(() => {
    admin.disconnect();
  });

  // The test's own timeout is the bound: a publish that hung would fail it.
  it('returns PUBLISH_APPEND_FAILED within its budget and writes nothing', { timeout: 10_000 }, async () => {
    const target = new URL(inject('redisUrl'));
    const proxy = await startTcpProxy(target.hostname, Number(target.port));
    const port = connectIoredis(proxy.url);
    const stream = `${uniquePrefix()}:orders`;
    const publisher = createPublisher({ port, routes: { placed: stream }, auth, timeoutMs: 1_000 });
    await publisher.publish({ eventType: 'placed', eventId: 'e0', payload: 'before' });

    proxy.cut();
    const totalBefore = publisherDuplicateHintsTotal();
    const single = await publisher.publish({ eventType: 'placed', eventId: 'e1', payload: 'x' }).catch((e: unknown) => e);
    const batch = await publisher
      .publishBatch([
        { eventType: 'placed', eventId: 'e2', payload: 'y' },
        { eventType: 'placed', eventId: 'e3', payload: 'z' },
      ])
      .catch((e: unknown) => e);
    for (const error of [single, batch]) {
      expect(error).toMatchObject({ name: 'PublishError', code: 'PUBLISH_APPEND_FAILED', transient: true });
      expect((error as Error).message).not.toContain(auth.key);
    }
    expect(publisher.duplicateHints).toBe(3);
    expect(publisherDuplicateHintsTotal() - totalBefore).toBe(3);

    expect(await admin.xlen(stream)).toBe(1);
    for (const id of ['e1', 'e2', 'e3']) expect(await admin.exists(`${stream}:pub:${id}`)).toBe(0);
    await port.close();
    await proxy.close();
  });

  it('fails the same way when Redis was never reachable', { timeout: 10_000 }, async () => {
    const proxy = await startTcpProxy('127.0.0.1', 1);
    const port = connectIoredis(proxy.url);
    const publisher = createPublisher({ port, routes: { placed: `${uniquePrefix()}:orders` }, auth, timeoutMs: 1_000 });
    await expect(publisher.publish({ eventType: 'placed', eventId: 'e1', payload: 'x' })).rejects.toMatchObject({
      code: 'PUBLISH_APPEND_FAILED',
      transient: true,
    });
    expect(publisher.duplicateHints).toBe(1);
    await port.close();
    await proxy.close();
  });
});
