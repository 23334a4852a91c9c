/**
 * Redis becoming unreachable mid-round (TCP client; the connection runs through a proxy the
 * test cuts). The round must fail loudly and leave every undecided entry pending — never
 * report "no messages" and never ack something it could not confirm.
 */
import { inspect } from 'node:util';
import { inject } from 'vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { ensureGroup } from '../../src/consume/groups';
import { createPoller } from '../../src/consume/poller';
import { connectIoredis } from '../../src/redis/ioredis-port';
import { fastConfig, recordingProcessor } from '../support/poller';
import { adminClient, append, pendingIds, uniquePrefix } from '../support/redis';
import { startTcpProxy } from '../support/tcp-proxy';

describe('redis unreachable mid-round (ioredis)', () => {
  let admin: Redis;
  beforeAll(() => {
    admin = adminClient();
  });
  afterAll(() => {
    admin.disconnect();
  });

  it('rejects the round with REDIS_UNAVAILABLE and leaves every entry pending', async () => {
    const target = new URL(inject('redisUrl'));
    const proxy = await startTcpProxy(target.hostname, Number(target.port));
    const port = connectIoredis(proxy.url);
    const stream = `${uniquePrefix()}:s`;
    await ensureGroup(port, stream, 'g', '0-0');
    const ids = [];
    for (let i = 0; i < 3; i += 1) ids.push(await append(admin, stream, { event_id: `e${i}`, payload: `p${i}` }));

    const seen: string[] = [];
    const poller = createPoller({
      port,
      config: fastConfig(stream),
      process: recordingProcessor(seen, (payload) => {
        if (payload === 'p1') proxy.cut(); // the network goes away while handlers run
        return 'committed';
      }),
    });
    await expect(poller.run({ mode: 'drain' })).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
    expect(seen).toEqual(['p0', 'p1', 'p2']);
    expect(await pendingIds(admin, stream, 'g')).toEqual(ids);
    await port.close();
    await proxy.close();
  });

  it('gives up on a connection that stops answering instead of hanging past the deadline', async () => {
    const target = new URL(inject('redisUrl'));
    const proxy = await startTcpProxy(target.hostname, Number(target.port));
    const port = connectIoredis(proxy.url, { exchangeTimeoutMs: 300 });
    const stream = `${uniquePrefix()}:s`;
    await ensureGroup(port, stream, 'g', '0-0');
    await append(admin, stream, { event_id: 'e0', payload: 'p0' });
    proxy.freeze();
    const poller = createPoller({ port, config: fastConfig(stream), process: recordingProcessor([]) });
    await expect(poller.run({ mode: 'drain' })).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE', message: /no reply within 300 ms/ });
    await port.close();
    await proxy.close();
  });

  it('ends within deadline + 1 s when Redis stalls mid-run, whatever the exchange timeout', async () => {
    const target = new URL(inject('redisUrl'));
    const proxy = await startTcpProxy(target.hostname, Number(target.port));
    const port = connectIoredis(proxy.url); // the default 10 s exchange timeout
    const stream = `${uniquePrefix()}:s`;
    await ensureGroup(port, stream, 'g', '0-0');
    const ids = [await append(admin, stream, { event_id: 'e0', payload: 'p0' })];
    const poller = createPoller({
      port,
      config: fastConfig(stream),
      process: recordingProcessor([], () => {
        proxy.freeze(); // the settle that follows gets no answer
        return 'committed';
      }),
    });
    const deadline = Date.now() + 1_500;
    await expect(poller.run({ mode: 'drain', deadline })).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
    expect(Date.now()).toBeLessThan(deadline + 1_000);
    const closing = Date.now();
    await port.close(); // drops the stalled connection instead of queueing QUIT behind it
    expect(Date.now() - closing).toBeLessThan(500);
    expect(await pendingIds(admin, stream, 'g')).toEqual(ids);
    await proxy.close();
  }, 30_000);

  it('never shows the password of its URL when inspected or serialized', async () => {
    const target = new URL(inject('redisUrl'));
    const port = connectIoredis(`redis://:hunter2-secret@${target.host}`, { lazyConnect: true });
    expect(inspect(port, { depth: 10 })).not.toContain('hunter2-secret');
    expect(JSON.stringify(port)).not.toContain('hunter2-secret');
    await port.close();
  });

  it('rejects when Redis is unreachable from the start, reading nothing', async () => {
    const proxy = await startTcpProxy('127.0.0.1', 1);
    const port = connectIoredis(proxy.url);
    const poller = createPoller({ port, config: fastConfig(`${uniquePrefix()}:s`), process: recordingProcessor([]) });
    await expect(poller.run({ mode: 'drain' })).rejects.toMatchObject({ code: 'REDIS_UNAVAILABLE' });
    await port.close();
    await proxy.close();
  });
});
